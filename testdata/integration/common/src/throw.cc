// C++ with exceptions: the unwinder must still work after sframe-gen.
#include <stdexcept>
#include <string>
static int depth(int n) { if (n == 0) throw std::runtime_error("bottom"); return depth(n - 1) + 1; }
int main() {
  try { depth(10); } catch (const std::exception &e) { return std::string(e.what()) == "bottom" ? 0 : 1; }
  return 1;
}
