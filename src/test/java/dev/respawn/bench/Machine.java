package dev.respawn.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** What the benchmarks ran on, and how loaded the machine was at a moment (others share it). */
record Machine(int cores, long memoryBytes, String cpu, String jvm, String os, long maxHeapBytes, String loadAverage,
    Instant at) {

  static Machine now() {
    long memory = -1;
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
      memory = os.getTotalMemorySize();
    }
    return new Machine(Runtime.getRuntime().availableProcessors(), memory, cpuModel(),
        System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
        System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"),
        Runtime.getRuntime().maxMemory(), currentLoadAverage(), Instant.now().truncatedTo(ChronoUnit.SECONDS));
  }

  /** The 1, 5 and 15 minute load averages, as /proc/loadavg says; "?" elsewhere. */
  static String currentLoadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException | RuntimeException e) {
      return "?";
    }
  }

  private static String cpuModel() {
    try {
      return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
          .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse("?");
    } catch (IOException | RuntimeException e) {
      return "?";
    }
  }
}
