// TranslateOffsets asks Java MirrorMaker 2's client library what a consumer group's translated offsets on a
// cluster are: RemoteClusterUtils.translateOffsets, which reads partition 0 of <remoteAlias>.checkpoints.internal
// and keeps the last checkpoint per partition of the group. kmirror's tests run it against checkpoints kmirror
// wrote, to check that Java tools read them exactly.
//
//   java -cp "$KAFKA_LIBS/*" TranslateOffsets.java BOOTSTRAP REMOTE_ALIAS GROUP [TIMEOUT_MS]
//
// (a single-file source program, JEP 330: no separate compile). Prints one line per partition,
// "topic<TAB>partition<TAB>offset", sorted by topic and partition; nothing for a group without checkpoints.
// Exits 1 with a message on stderr on any error, including a read of the checkpoints topic that did not reach
// its end within the timeout (translateOffsets itself would return what it had read so far). Logging goes to
// stderr at WARN unless -Dlog4j2.configurationFile names another configuration.

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

public class TranslateOffsets {
    private static final String LOG4J2 = String.join("\n",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
        "<Configuration status=\"WARN\">",
        "  <Appenders><Console name=\"stderr\" target=\"SYSTEM_ERR\"><PatternLayout pattern=\"[%d] %p %m (%c)%n\"/></Console></Appenders>",
        "  <Loggers><Root level=\"WARN\"><AppenderRef ref=\"stderr\"/></Root></Loggers>",
        "</Configuration>", "");

    public static void main(String[] args) {
        // stdout carries only the result: anything else that writes to System.out goes to stderr.
        PrintStream out = System.out;
        System.setOut(System.err);
        try {
            if (args.length < 3 || args.length > 4) {
                throw new IllegalArgumentException("usage: TranslateOffsets BOOTSTRAP REMOTE_ALIAS GROUP [TIMEOUT_MS]");
            }
            Duration timeout = Duration.ofMillis(args.length == 4 ? Long.parseLong(args[3]) : 30_000);
            quietLogging();

            Map<String, Object> props = new HashMap<>();
            props.put("bootstrap.servers", args[0]);
            long start = System.nanoTime();
            Map<TopicPartition, OffsetAndMetadata> offsets =
                RemoteClusterUtils.translateOffsets(props, args[1], args[2], timeout);
            // MirrorClient.remoteConsumerOffsets stops polling at the deadline and returns what it has; a result
            // that took the whole timeout may be partial.
            if (System.nanoTime() - start >= timeout.toNanos()) {
                throw new IllegalStateException("reading " + args[1] + ".checkpoints.internal did not finish within "
                    + timeout.toMillis() + " ms: the result may be partial");
            }

            List<Map.Entry<TopicPartition, OffsetAndMetadata>> entries = new ArrayList<>(offsets.entrySet());
            entries.sort(Comparator.comparing((Map.Entry<TopicPartition, OffsetAndMetadata> e) -> e.getKey().topic())
                .thenComparingInt(e -> e.getKey().partition()));
            StringBuilder sb = new StringBuilder();
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e : entries) {
                sb.append(e.getKey().topic()).append('\t').append(e.getKey().partition()).append('\t')
                    .append(e.getValue().offset()).append('\n');
            }
            out.print(sb);
            out.flush();
            if (out.checkError()) {
                throw new IllegalStateException("writing the result to stdout failed");
            }
        } catch (Throwable e) {
            System.err.println("TranslateOffsets: " + e);
            e.printStackTrace(System.err);
            System.exit(1);
        }
        System.exit(0); // the clients' threads must not keep the JVM alive
    }

    // Logs WARN and above to stderr unless the caller chose a log4j2 configuration. Runs before any Kafka class
    // initializes its logger.
    private static void quietLogging() throws Exception {
        if (System.getProperty("log4j2.configurationFile") != null) {
            return;
        }
        Path cfg = Files.createTempFile("translate-offsets-log4j2", ".xml");
        cfg.toFile().deleteOnExit();
        Files.writeString(cfg, LOG4J2, StandardCharsets.UTF_8);
        System.setProperty("log4j2.configurationFile", cfg.toString());
    }
}
