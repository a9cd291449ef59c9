import Foundation

/// The interactive banks table: sections by state, newest closing first; arrows or j/k move, page
/// up/down, g/G go to the ends, `/` filters as you type, `d` deletes the selected bank, `q` quits.
///
/// All state lives on `queue`: keys (from the reader thread), the live editor's reports and the fetched
/// results controller's change reports (from the context's queue) are queued there, and every change
/// redraws the whole screen. Only visible rows are read, so the fetch's batches of 20 are faulted in as
/// the list scrolls. Nothing is refetched when banks change elsewhere: the editor's saves are merged
/// into the list's context and the controller moves just the rows that changed.
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
    /// What the live editor did last, and what the controller reported last (they arrive separately).
    private var lastEdit: String?
    private var lastChange: BankSections.Change?
    /// Edits reported minus controller reports received: 0 when the last two belong together (either
    /// may arrive first, from different queues).
    private var unmatchedEdits = 0

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
            list.observeChanges { change in self.queue.async { self.applyControllerChange(change) } }
            KeyReader.start { key in self.queue.async { self.handle(key) } }
            live?.start { report in self.queue.async { self.applyLiveEdit(report) } }
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
            if let deleted = try list.deleteBank(at: selectedRow) {
                status = "deleted \(deleted.name)" + (deleted.change.map { " (\($0.summary))" } ?? "")
            }
        } catch {
            status = "delete failed: \(error)"
        }
        rebuildLines()
        move(to: selectedRow)
    }

    /// The live editor saved something; the controller's report of it comes separately.
    private func applyLiveEdit(_ report: String) {
        lastEdit = report
        // An edit that changed nothing the list shows gets no report: do not wait for it.
        unmatchedEdits = min(unmatchedEdits, 0) + 1
        showLiveStatus()
    }

    /// The controller reported a change merged from elsewhere: the rows are already in place.
    private func applyControllerChange(_ change: BankSections.Change) {
        lastChange = change
        unmatchedEdits -= 1
        rebuildLines()
        move(to: selectedRow)
        showLiveStatus()
    }

    private func showLiveStatus() {
        guard onQuit != nil, !isEditingFilter else { return }
        let summary = unmatchedEdits == 0 ? lastChange.map { " (\($0.summary))" } ?? "" : ""
        status = "change: \(lastEdit ?? "saved elsewhere")" + summary
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
