import java.util.Arrays;

/**
 * Formats a Kafka node's storage, then starts the node, in one JVM. infra/kafka/kafka.ts ran
 * kafka.tools.StorageTool in a JVM of its own before each new node's (about 1.1 s of CPU
 * each, 37 times in one run of the tests); this saves that second JVM's start. kafka.ts
 * compiles it once (javac) and falls back to the two JVMs where it cannot.
 *
 * Arguments: StorageTool's own ("format", "-t", ...), then "kafka.Kafka" and the node's
 * server.properties: the command line ends as a plain broker's does, which is how infra
 * and the benchmarks recognise a broker's process.
 */
public final class FormatThenStart {
  public static void main(String[] args) throws Exception {
    int at = Arrays.asList(args).indexOf("kafka.Kafka");
    if (at < 1 || at != args.length - 2) {
      System.err.println("usage: FormatThenStart format <StorageTool's arguments> kafka.Kafka <server.properties>");
      System.exit(2);
    }
    int status = kafka.tools.StorageTool.execute(Arrays.copyOfRange(args, 0, at), System.out);
    if (status != 0) {
      System.err.println("kafka: storage format failed (StorageTool exit " + status + ")");
      System.exit(status);
    }
    kafka.Kafka.main(new String[] {args[at + 1]});
  }
}
