// Entry point: `swift run -c release ocd-bench --help`. See BENCHMARKS.md.
BenchCommand.main()
