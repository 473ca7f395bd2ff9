// C++ exceptions thrown and caught through several frames (libstdc++,
// libgcc_s's unwinder on the stack).
#include <stdexcept>
#include <string>
volatile long sink;
namespace work {
struct Thrower {
	__attribute__((noinline)) void deep(int n) {
		if (n == 0)
			throw std::runtime_error("bottom " + std::to_string(sink & 7));
		deep(n - 1);
		sink++;
	}
};
} // namespace work
int main() {
	work::Thrower t;
	for (;;) {
		try {
			t.deep(8 + (int)(sink & 3));
		} catch (const std::exception &e) {
			sink += (long)e.what()[0];
		}
	}
}
