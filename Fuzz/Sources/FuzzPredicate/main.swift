import Foundation
import FuzzDriver

// libFuzzer runs `checkFormatString` on every input; its command-line options work as usual.
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { bytes, count in
    checkFormatString(UnsafeBufferPointer(start: bytes, count: count))
    return 0
})
