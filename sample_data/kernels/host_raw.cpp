// A C++ host file holding its device code in a raw string literal.
#include <string>

static const std::string kSource = R"CLC(
#define FACTOR 2
__kernel void twice_plus(__global float* x, const float bias, const int n) {
    int i = get_global_id(0);
    if (i < n) {
        x[i] = FACTOR * x[i] + bias; // the bias is a random scalar
    }
}
)CLC";

int main() { return static_cast<int>(kSource.size() == 0); }
