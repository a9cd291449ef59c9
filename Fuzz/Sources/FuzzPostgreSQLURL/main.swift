import Foundation
import FuzzDriver

// libFuzzer runs `checkPostgreSQLURL` on every input; its command-line options work as usual.
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { bytes, count in
    checkPostgreSQLURL(bytes.map { Data(bytes: $0, count: count) } ?? Data())
    return 0
})
