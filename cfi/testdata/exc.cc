// A C++ program with exceptions: personality routines and LSDAs.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

__attribute__((noinline)) int thrower(int x) {
	if (x > 3)
		throw std::runtime_error("too big: " + std::to_string(x));
	return x * 2;
}

__attribute__((noinline)) int catcher(int x) {
	std::vector<std::string> v(x, "s");
	try {
		return thrower(x) + (int)v.size();
	} catch (const std::exception &e) {
		std::puts(e.what());
		return -1;
	}
}

int main(int argc, char **) { return catcher(argc) + catcher(argc + 5) > 0 ? 0 : 1; }
