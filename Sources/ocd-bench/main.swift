print("ocd-bench")
