#include "cli/common.h"

int main(int argc, char** argv) { return haven::cli::Main(argc, argv); }
