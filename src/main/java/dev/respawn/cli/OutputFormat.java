package dev.respawn.cli;

/** {@code -o}: how a plugin command prints its result. */
enum OutputFormat {
  table, json, yaml
}
