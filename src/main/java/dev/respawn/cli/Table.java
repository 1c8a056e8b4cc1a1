package dev.respawn.cli;

import java.util.ArrayList;
import java.util.List;

/** A kubectl-style table: upper-case headers, left-aligned columns three spaces apart. */
final class Table {
  private final List<String[]> rows = new ArrayList<>();

  Table(String... headers) {
    rows.add(headers);
  }

  Table row(Object... cells) {
    String[] texts = new String[cells.length];
    for (int i = 0; i < cells.length; i++) {
      texts[i] = cells[i] == null || cells[i].toString().isEmpty() ? "-" : cells[i].toString();
    }
    rows.add(texts);
    return this;
  }

  /** Label/value lines (a one-object "describe" layout). */
  static String fields(String[][] pairs) {
    int width = 0;
    for (String[] p : pairs) {
      width = Math.max(width, p[0].length() + 1);
    }
    StringBuilder sb = new StringBuilder();
    for (String[] p : pairs) {
      sb.append(String.format("%-" + (width + 2) + "s%s%n", p[0] + ":", p[1] == null || p[1].isEmpty() ? "-" : p[1]));
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    int columns = rows.get(0).length;
    int[] widths = new int[columns];
    for (String[] r : rows) {
      for (int i = 0; i < columns && i < r.length; i++) {
        widths[i] = Math.max(widths[i], r[i].length());
      }
    }
    StringBuilder sb = new StringBuilder();
    for (String[] r : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < columns && i < r.length; i++) {
        line.append(i == columns - 1 ? r[i] : String.format("%-" + (widths[i] + 3) + "s", r[i]));
      }
      sb.append(line.toString().stripTrailing()).append(System.lineSeparator());
    }
    return sb.toString();
  }
}
