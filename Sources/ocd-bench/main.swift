#if canImport(Glibc)
import Glibc
#endif

// Entry point: `swift run -c release ocd-bench --help`. See BENCHMARKS.md.
// Line-buffered output, so a run redirected to a file shows each scenario as it finishes.
setvbuf(stdout, nil, _IOLBF, 0)
BenchCommand.main()
