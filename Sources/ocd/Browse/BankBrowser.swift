import Foundation

/// The interactive banks table: sections by state, newest closing first; arrows or j/k move, page
/// up/down, g/G go to the ends, `/` filters as you type, `d` deletes the selected bank, `q` quits.
///
/// All state lives on `queue`: keys (from the reader thread) and live changes (from the editor) are
/// queued there, and every change redraws the whole screen. Only visible rows are read, so the fetch's
/// batches of 20 are faulted in as the list scrolls.
final class BankBrowser: @unchecked Sendable {
    // @unchecked Sendable: every mutable property is touched only on `queue`.

    private enum Line {
        case section(String, Int)
        case bank(Int)
    }

    private let list: BankSections
    private let queue = DispatchQueue(label: "ocd.browser")
    private var selectedRow = 0
    private var topLine = 0
    private var isEditingFilter = false
    private var filterDraft = ""
    private var status = ""
    private var lines: [Line] = []
    private var onQuit: (@Sendable () -> Void)?

    init(list: BankSections) {
        self.list = list
    }

    /// Shows the table and returns when the user quits.
    func run(live: LiveBankEditor?) async {
        let terminal = TerminalSession()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.onQuit = { continuation.resume() }
                self.rebuildLines()
                self.status = live == nil ? "" : "live: a background context edits banks every second"
                self.render()
            }
            KeyReader.start { key in self.queue.async { self.handle(key) } }
            live?.start { report in self.queue.async { self.applyLiveChange(report) } }
        }
        live?.stop()
        terminal.restore()
    }

    // MARK: Input

    private func handle(_ key: Key) {
        guard onQuit != nil else { return }
        if isEditingFilter {
            handleFilterKey(key)
        } else {
            switch key {
            case .up, .character("k"): move(by: -1)
            case .down, .character("j"): move(by: 1)
            case .pageUp, .character("b"): move(by: -pageSize)
            case .pageDown, .character(" "): move(by: pageSize)
            case .character("g"): move(to: 0)
            case .character("G"): move(to: list.count - 1)
            case .character("/"):
                isEditingFilter = true
                filterDraft = list.filterText
            case .character("d"): deleteSelected()
            case .character("q"), .escape:
                let quit = onQuit
                onQuit = nil
                quit?()
                return
            default: break
            }
        }
        render()
    }

    private func handleFilterKey(_ key: Key) {
        switch key {
        case .enter: isEditingFilter = false
        case .escape:
            isEditingFilter = false
            filterDraft = ""
        case .backspace: if !filterDraft.isEmpty { filterDraft.removeLast() }
        case .character(let character): filterDraft.append(character)
        default: return
        }
        // Live: the list follows each keystroke.
        do {
            try list.setFilter(filterDraft)
            status = list.filterNote ?? (filterDraft.isEmpty ? "" : "predicate: \(filterDraft)")
        } catch {
            status = "filter: \(error)"
        }
        rebuildLines()
        move(to: 0)
    }

    private func deleteSelected() {
        do {
            if let name = try list.deleteBank(at: selectedRow) { status = "deleted \(name)" }
        } catch {
            status = "delete failed: \(error)"
        }
        rebuildLines()
        move(to: selectedRow)
    }

    private func applyLiveChange(_ report: String) {
        let before = Set(list.objectIDs)
        do {
            try list.performFetch()
        } catch {
            status = "refetch failed: \(error)"
            return
        }
        let after = Set(list.objectIDs)
        let inserted = after.subtracting(before).count, deleted = before.subtracting(after).count
        status = "change: \(report) (+\(inserted) −\(deleted))"
        rebuildLines()
        move(to: selectedRow)
        render()
    }

    // MARK: Layout

    private var pageSize: Int { max(1, TerminalSession.size().rows - 4) }

    private func rebuildLines() {
        lines = list.sections.flatMap { section in
            [Line.section(section.name, section.rows.count)] + section.rows.map { Line.bank($0) }
        }
    }

    private func move(by delta: Int) { move(to: selectedRow + delta) }

    private func move(to row: Int) {
        selectedRow = max(0, min(row, list.count - 1))
        let selectedLine = lines.firstIndex { if case .bank(selectedRow) = $0 { return true } else { return false } } ?? 0
        let visible = pageSize
        if selectedLine < topLine { topLine = max(0, selectedLine - 1) }   // keep the section header in view
        if selectedLine >= topLine + visible { topLine = selectedLine - visible + 1 }
    }

    private func render() {
        let (rows, columns) = TerminalSession.size()
        let visible = max(1, rows - 4)
        var screen = "\u{1B}[H\u{1B}[2J"
        let position = list.count == 0 ? "no banks" : "bank \(selectedRow + 1) of \(list.count)"
        screen += fit("Failed banks by state, newest closing first — \(position)", columns, style: "\u{1B}[1m") + "\n"
        for line in lines.dropFirst(topLine).prefix(visible) {
            switch line {
            case .section(let name, let count):
                screen += fit("── \(name) (\(count)) ──", columns, style: "\u{1B}[36m") + "\n"
            case .bank(let row):
                let bank = list.bank(at: row)
                let text = "  \(bank?.closeDateText ?? "")  \(bank?.name ?? "?"), \(bank?.city ?? "")"
                screen += fit(text, columns, style: row == selectedRow ? "\u{1B}[7m" : "") + "\n"
            }
        }
        let shown = min(visible, max(0, lines.count - topLine))
        screen += String(repeating: "\n", count: visible - shown)
        screen += fit(isEditingFilter ? "/\(filterDraft)▏" : status, columns) + "\n"
        screen += fit("↑↓ j k  PgUp PgDn  g G  / filter  d delete  q quit", columns, style: "\u{1B}[2m")
        Console.raw(screen)
    }

    /// Cuts a line to the screen's width and styles it.
    private func fit(_ text: String, _ columns: Int, style: String = "") -> String {
        let cut = String(text.prefix(max(1, columns - 1)))
        return style.isEmpty ? cut : style + cut + "\u{1B}[0m"
    }
}
