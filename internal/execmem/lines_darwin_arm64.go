package execmem

// cacheLines returns the data and instruction cache line sizes the flush
// strides on macOS: 64 bytes each.
//
// macOS does not let user space read CTR_EL0: XNU leaves SCTLR_EL1.UCT
// clear (its SCTLR_EL1_REQUIRED has UCI but not UCT), so MRS CTR_EL0
// traps and the process gets EXC_BAD_INSTRUCTION (SIGILL). The cache
// maintenance itself is allowed from user space (UCI is set): DC CVAU
// and IC IVAU run as on Linux, which is what libSystem's own
// sys_icache_invalidate does on arm64, without cgo. Its stride is XNU's
// MMU_I_CLINE, 64 bytes on every Apple core (and on the Virtualization
// framework's and QEMU's virtual CPUs), and the data-cache lines are as
// long (MMU_CLINE); the 128 bytes of sysctl hw.cachelinesize are a
// coherence granule, too long a stride to use here. Cleaning the data
// cache too is the architected sequence; Apple cores would not need it.
func cacheLines() (dline, iline uintptr) { return 64, 64 }
