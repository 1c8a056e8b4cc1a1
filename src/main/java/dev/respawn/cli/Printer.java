package dev.respawn.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.function.Supplier;

/** Prints a command's result document as JSON, YAML, or the command's human table. */
final class Printer {
  private static final ObjectWriter JSON = new ObjectMapper().writer(new DefaultPrettyPrinter()
      .withSeparators(Separators.createDefaultInstance().withObjectFieldValueSpacing(Separators.Spacing.AFTER))
      .withArrayIndenter(DefaultIndenter.SYSTEM_LINEFEED_INSTANCE));
  private static final ObjectWriter YAML = YAMLMapper.builder()
      .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER).disable(YAMLGenerator.Feature.SPLIT_LINES).build()
      .writer();

  private Printer() {}

  static void print(PrintWriter out, OutputFormat format, Object document, Supplier<String> table) {
    String text = switch (format) {
      case json -> write(JSON, document) + System.lineSeparator();
      case yaml -> write(YAML, document);
      case table -> table.get();
    };
    out.print(text.endsWith("\n") ? text : text + System.lineSeparator());
    out.flush();
  }

  private static String write(ObjectWriter writer, Object document) {
    try {
      return writer.writeValueAsString(document);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }
}
