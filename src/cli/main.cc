#include <malloc.h>

#include "cli/common.h"

int main(int argc, char** argv) {
  // Keep freed chunk and pack buffers in the heap for reuse instead of returning them to
  // the kernel after every blob: each fresh mmap costs a page fault per 4 KiB, which on
  // virtual machines was ~30% of a backup's system time (bench/RESULTS.md).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  return haven::cli::Main(argc, argv);
}
