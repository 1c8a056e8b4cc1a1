package dev.respawn.simulate;

import dev.respawn.simulate.SimulationReport.Row;
import dev.respawn.simulate.SimulationReport.Summary;
import java.util.ArrayList;
import java.util.List;

/** The text form of a report: a header, an aligned table (kubectl style) and the summary. */
final class ReportTable {
  static final List<String> COLUMNS = List.of("RUN", "STORY", "AT", "CLASS/REASON", "DECISION", "REASON-CODE",
      "DELAY", "NEXT-START", "ATTEMPT", "CIRCUIT", "PHASE", "NOTES");

  private ReportTable() {}

  static String render(SimulationReport r) {
    StringBuilder out = new StringBuilder();
    var p = r.policy();
    out.append("Policy:   ").append(p.namespace() == null ? "" : p.namespace() + "/").append(p.name())
        .append(" (").append(p.source()).append("), tier ").append(p.tier()).append('\n');
    out.append("Settings: ").append(p.settings()).append('\n');
    if (p.tierRestriction() != null) {
      out.append("Warning:  ").append(p.tierRestriction()).append(" (Accepted=False, reason TierRestricted)\n");
    }
    if (r.seed() != null) {
      out.append("Seed:     ").append(r.seed()).append('\n');
    }
    out.append("Story:    ").append(r.story()).append("\n\n");
    List<List<String>> cells = new ArrayList<>();
    cells.add(COLUMNS);
    for (Row row : r.runs()) {
      cells.add(row.reached() ? reached(row) : List.of("-", row.token(), "-", "-", "-", "-", "-", "-", "-", "-", "-",
          String.join("; ", row.notes())));
    }
    out.append(align(cells)).append('\n');
    Summary s = r.summary();
    out.append("Outcome:  ").append(s.outcome()).append(" at ").append(s.at());
    if (s.terminalReason() != null) {
      out.append(": ").append(s.terminalReason());
    }
    if (isTerminal(s) && s.reasonCode() != null) {
      out.append(" (").append(s.reasonCode()).append(')');
    }
    out.append(" - ").append(s.note()).append('\n');
    out.append("Restarts: ").append(s.restarts()).append(" (").append(s.runs()).append(s.runs() == 1 ? " run" : " runs")
        .append(")\n");
    out.append("Final:    phase ").append(s.phase()).append(", attempt ").append(s.attempt()).append(", circuit ")
        .append(s.circuit()).append(" (").append(s.circuitTrips()).append(s.circuitTrips() == 1 ? " trip" : " trips")
        .append(")\n");
    if (!s.notReached().isEmpty()) {
      out.append("Not reached: ").append(String.join(", ", s.notReached())).append('\n');
    }
    return out.toString();
  }

  private static boolean isTerminal(Summary s) {
    return List.of("Escalated", "Failed", "Succeeded").contains(s.outcome());
  }

  private static List<String> reached(Row row) {
    String cls = row.interruptionClass() == null ? "-" : row.interruptionClass() + "/" + row.failureReason();
    String attempt = row.attempt() + (row.maxAttempts() != null ? "/" + row.maxAttempts() : "");
    String phase = row.phase() + (row.terminalReason() != null ? " (" + row.terminalReason() + ")" : "");
    return List.of(String.valueOf(row.run()), row.token(), row.at(), cls, dash(row.decision()), dash(row.reasonCode()),
        dash(row.delay()), dash(row.nextStartAt()), attempt, row.circuit(), phase,
        row.notes().isEmpty() ? "" : String.join("; ", row.notes()));
  }

  private static String dash(String s) {
    return s == null ? "-" : s;
  }

  /** Columns padded to their widest cell, separated by three spaces, no trailing blanks. */
  static String align(List<List<String>> rows) {
    int[] widths = new int[rows.get(0).size()];
    for (List<String> row : rows) {
      for (int i = 0; i < row.size(); i++) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    StringBuilder sb = new StringBuilder();
    for (List<String> row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.size(); i++) {
        line.append(row.get(i));
        if (i < row.size() - 1) {
          line.append(" ".repeat(widths[i] - row.get(i).length() + 3));
        }
      }
      sb.append(line.toString().stripTrailing()).append('\n');
    }
    return sb.toString();
  }
}
