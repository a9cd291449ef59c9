import Foundation

// The results: one per scenario and size, printed as a table and written as JSON.

struct ScenarioResult: Encodable {
    enum Status: String, Encodable {
        case ok, skipped, failed
    }

    var scenario: String
    /// The store size the scenario ran at (N).
    var size: Int
    var rows: Int
    var targetRatio: Double?
    var status: Status
    var message: String?
    var note: String?
    var oursSeconds: [Double] = []
    var rawSeconds: [Double] = []
    var peerSeconds: [Double] = []
    var oursPeakBytes = 0
    var rawPeakBytes = 0
    var peerPeakBytes = 0
    /// Why there is no peer side, when there is none.
    var peerMissing: String?
    var perRunDivisor: (key: String, count: Int)?
    /// Scenario-specific figures, summarized after the runs.
    var figures: [FigureResult] = []
    var peakMemoryTargetMB: Double?

    var oursMedian: Double? { median(oursSeconds) }
    var rawMedian: Double? { median(rawSeconds) }
    var peerMedian: Double? { median(peerSeconds) }
    var ratio: Double? {
        guard let ours = oursMedian, let raw = rawMedian, raw > 0 else { return nil }
        return ours / raw
    }
    /// Ours over the peer: below 1 where ours is ahead.
    var ratioToPeer: Double? {
        guard let ours = oursMedian, let peer = peerMedian, peer > 0 else { return nil }
        return ours / peer
    }
    /// The figures plus, when the scenario bounds it, ours' peak memory above baseline.
    var allFigures: [FigureResult] {
        guard let limit = peakMemoryTargetMB else { return figures }
        return figures + [FigureResult(spec: FigureSpec("peak_memory_above_baseline_mb", .max, target: limit, unit: "MB", measuredIn: .memory),
                                       value: Self.megabytes(oursPeakBytes), samples: 1)]
    }

    /// The ratio within its target (when there is a ratio target) and every figure within its own.
    var meetsTarget: Bool? {
        var verdicts: [Bool] = []
        if let targetRatio {
            guard let ratio else { return nil }
            verdicts.append(ratio <= targetRatio)
        }
        for figure in allFigures where figure.spec.target != nil {
            guard let met = figure.meetsTarget else { return nil }
            verdicts.append(met)
        }
        return verdicts.isEmpty ? nil : !verdicts.contains(false)
    }

    var targetText: String {
        if let targetRatio { return String(format: "<=%.1fx", targetRatio) }
        return "abs"
    }

    private static func megabytes(_ bytes: Int) -> Double { (Double(bytes) / 1_048_576 * 10).rounded() / 10 }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(scenario, forKey: Key("scenario"))
        try container.encode(rows, forKey: Key("rows"))
        try container.encode(oursMedian, forKey: Key("ours_median_s"))
        try container.encode(rawMedian, forKey: Key("raw_median_s"))
        try container.encode(ratio, forKey: Key("ratio"))
        try container.encode(peerMedian, forKey: Key("peer_median_s"))
        try container.encode(ratioToPeer, forKey: Key("ratio_to_peer"))
        if let peerMissing { try container.encode(peerMissing, forKey: Key("peer_note")) }
        try container.encode(targetRatio, forKey: Key("target_ratio"))
        try container.encode(status == .ok ? Self.megabytes(oursPeakBytes) : nil, forKey: Key("peak_memory_mb"))
        // Scenario-specific and supporting figures.
        try container.encode(size, forKey: Key("store_rows"))
        try container.encode(status.rawValue, forKey: Key("status"))
        try container.encode(meetsTarget, forKey: Key("meets_target"))
        try container.encode(status == .ok ? Self.megabytes(rawPeakBytes) : nil, forKey: Key("raw_peak_memory_mb"))
        try container.encode(oursSeconds, forKey: Key("ours_runs_s"))
        try container.encode(rawSeconds, forKey: Key("raw_runs_s"))
        try container.encode(peerSeconds, forKey: Key("peer_runs_s"))
        try container.encode(status == .ok && !peerSeconds.isEmpty ? Self.megabytes(peerPeakBytes) : nil,
                             forKey: Key("peer_peak_memory_mb"))
        if let message { try container.encode(message, forKey: Key("message")) }
        if let note { try container.encode(note, forKey: Key("note")) }
        for figure in allFigures {
            try container.encode(figure.value, forKey: Key(figure.spec.key))
            if let target = figure.spec.target {
                try container.encode(target, forKey: Key("\(figure.spec.key)_target"))
            }
            try container.encode(figure.spec.summary.rawValue, forKey: Key("\(figure.spec.key)_summary"))
            try container.encode(figure.samples, forKey: Key("\(figure.spec.key)_samples"))
        }
        if let divisor = perRunDivisor, divisor.count > 0 {
            try container.encode(oursMedian.map { $0 / Double(divisor.count) * 1e6 }, forKey: Key("ours_\(divisor.key)"))
            try container.encode(rawMedian.map { $0 / Double(divisor.count) * 1e6 }, forKey: Key("raw_\(divisor.key)"))
            try container.encode(peerMedian.map { $0 / Double(divisor.count) * 1e6 }, forKey: Key("peer_\(divisor.key)"))
        }
    }

    // MARK: Text

    static let header = [
        pad("scenario", 26), pad("rows", 10, right: true), pad("ours (s)", 11, right: true),
        pad("raw (s)", 11, right: true), pad("ratio", 8, right: true), pad("target", 8, right: true),
        pad("peak MB", 9, right: true), pad("peer (s)", 11, right: true), pad("vs peer", 9, right: true), "  result",
    ].joined()

    var line: String {
        let rowsText = Self.pad(Self.grouped(rows), 10, right: true)
        switch status {
        case .ok:
            let verdict = meetsTarget == nil ? "-" : (meetsTarget! ? "ok" : "MISSES TARGET")
            return [
                Self.pad(scenario, 26), rowsText,
                Self.pad(oursMedian.map { Self.seconds($0) } ?? "-", 11, right: true),
                Self.pad(rawMedian.map { Self.seconds($0) } ?? "-", 11, right: true),
                Self.pad(ratio.map { String(format: "%.2fx", $0) } ?? "-", 8, right: true),
                Self.pad(targetText, 8, right: true),
                Self.pad(String(format: "%.1f", Self.megabytes(oursPeakBytes)), 9, right: true),
                Self.pad(peerMedian.map { Self.seconds($0) } ?? "-", 11, right: true),
                Self.pad(ratioToPeer.map { String(format: "%.2fx", $0) } ?? "-", 9, right: true),
                "  " + verdict,
            ].joined()
        case .skipped:
            return Self.pad(scenario, 26) + rowsText + "  skipped: " + (message ?? "")
        case .failed:
            return Self.pad(scenario, 26) + rowsText + "  FAILED: " + (message ?? "")
        }
    }

    static func seconds(_ value: Double) -> String {
        value < 0.01 ? String(format: "%.6f", value) : String(format: "%.4f", value)
    }

    static func grouped(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        guard text.count < width else { return text + " " }
        let padding = String(repeating: " ", count: width - text.count)
        return right ? padding + text : text + padding
    }
}

extension ScenarioResult {
    var markdownTarget: String {
        targetRatio.map { "≤ \(String(format: "%.1f", $0))×" } ?? "figures"
    }
}

enum Report {
    /// The Markdown table BENCHMARKS.md shows.
    static func markdown(_ results: [ScenarioResult]) -> String {
        var lines = [
            "| scenario | rows | raw median (s) | peer median (s) | ours median (s) | ours/raw | target | ours/peer | peak MB (ours) | peak MB (raw) | result |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for result in results {
            let rows = ScenarioResult.grouped(result.rows)
            switch result.status {
            case .ok:
                let verdict = result.meetsTarget == nil ? "–" : (result.meetsTarget! ? "ok" : "**misses**")
                let peer = result.peerMedian.map(ScenarioResult.seconds) ?? "–"
                let versusPeer = result.ratioToPeer.map { String(format: "%.2f×", $0) } ?? "–"
                lines.append("| \(result.scenario) | \(rows) | \(result.rawMedian.map(ScenarioResult.seconds) ?? "–") | \(peer) | \(result.oursMedian.map(ScenarioResult.seconds) ?? "-") | \(result.ratio.map { String(format: "%.2f×", $0) } ?? "–") | \(result.markdownTarget) | \(versusPeer) | \(String(format: "%.1f", Double(result.oursPeakBytes) / 1_048_576)) | \(String(format: "%.1f", Double(result.rawPeakBytes) / 1_048_576)) | \(verdict) |")
            case .skipped, .failed:
                lines.append("| \(result.scenario) | \(rows) | – | – | – | – | \(result.markdownTarget) | – | – | – | \(result.status.rawValue): \(result.message ?? "") |")
            }
        }
        let withFigures = results.filter { $0.status == .ok && !$0.allFigures.isEmpty }
        if !withFigures.isEmpty {
            lines.append("")
            lines.append("| scenario | rows | figure | value | target | result |")
            lines.append("|---|---:|---|---:|---:|---|")
            for result in withFigures {
                for figure in result.allFigures {
                    let value = figure.value.map { String(format: $0 < 10 ? "%.3f" : "%.1f", $0) } ?? "–"
                    let target = figure.spec.target.map { String(format: "≤ %g %@", $0, figure.spec.unit) } ?? "–"
                    let verdict = figure.meetsTarget == nil ? "–" : (figure.meetsTarget! ? "ok" : "**misses**")
                    lines.append("| \(result.scenario) | \(ScenarioResult.grouped(result.rows)) | `\(figure.spec.key)` (\(figure.spec.summary.rawValue) of \(figure.samples)) | \(value) \(figure.spec.unit) | \(target) | \(verdict) |")
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    static func writeJSON(_ results: [ScenarioResult], to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(results)
        try data.write(to: URL(fileURLWithPath: path))
    }
}
