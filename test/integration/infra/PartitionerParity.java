import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java side of the partitioner parity test, run from the same Maven jars as the broker.
 * Usage: java -cp 'infra/kafka/.work/lib/*' PartitionerParity.java BOOTSTRAP TOPIC KEYS_FILE OUT_FILE N...
 * KEYS_FILE holds one hex-encoded key a line. For each key it writes to OUT_FILE the
 * partition the Java client's own partitioner picks for every N, then produces the key
 * with the real KafkaProducer to TOPIC (header producer=java).
 */
public class PartitionerParity {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0], topic = args[1];
    List<String> keys = Files.readAllLines(Path.of(args[2]));
    Path out = Path.of(args[3]);
    List<Integer> counts = new ArrayList<>();
    for (int i = 4; i < args.length; i++) counts.add(Integer.parseInt(args[i]));

    HexFormat hex = HexFormat.of();
    StringBuilder lines = new StringBuilder();
    for (String k : keys) {
      byte[] key = hex.parseHex(k);
      lines.append(k.isEmpty() ? "-" : k);
      for (int n : counts) lines.append(' ').append(BuiltInPartitioner.partitionForKey(key, n));
      lines.append('\n');
    }
    Files.writeString(out, lines.toString());

    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
      for (String k : keys) {
        ProducerRecord<byte[], byte[]> record =
            new ProducerRecord<>(topic, hex.parseHex(k), "java".getBytes());
        record.headers().add("producer", "java".getBytes());
        producer.send(record);
      }
      producer.flush();
    }
  }
}
