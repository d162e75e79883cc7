"""Standing hostile tests: one file per kind of finding (signals, refusals
before the work, output location, inputs read as Hadoop reads them, the C
kernels on unaligned data, closed and full standard streams), each case one
that failed on an earlier main."""
