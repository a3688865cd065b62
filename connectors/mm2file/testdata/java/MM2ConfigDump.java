import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.connect.mirror.MirrorCheckpointConnector;
import org.apache.kafka.connect.mirror.MirrorHeartbeatConnector;
import org.apache.kafka.connect.mirror.MirrorMakerConfig;
import org.apache.kafka.connect.mirror.MirrorSourceConnector;
import org.apache.kafka.connect.mirror.SourceAndTarget;

import java.io.File;
import java.util.Map;
import java.util.TreeMap;

/**
 * For each mm2.properties given, prints what Kafka's MirrorMakerConfig makes of it: the herder pairs
 * (clusterPairs) and connectorBaseConfig of the three connectors of every pair, or the error its
 * constructor throws. Output: one JSON object keyed by file name, written to the directory given first.
 */
public class MM2ConfigDump {
    public static void main(String[] args) throws Exception {
        File outDir = new File(args[0]);
        ObjectMapper json = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);
        Class<?>[] classes = {MirrorSourceConnector.class, MirrorCheckpointConnector.class, MirrorHeartbeatConnector.class};
        for (int i = 1; i < args.length; i++) {
            File in = new File(args[i]);
            Map<String, Object> out = new TreeMap<>();
            try {
                Map<String, String> props = Utils.propsToStringMap(Utils.loadProps(in.getPath()));
                MirrorMakerConfig config = new MirrorMakerConfig(props);
                Map<String, Object> pairs = new TreeMap<>();
                for (SourceAndTarget pair : config.clusterPairs()) {
                    Map<String, Object> connectors = new TreeMap<>();
                    for (Class<?> c : classes) {
                        connectors.put(c.getSimpleName(), new TreeMap<>(config.connectorBaseConfig(pair, c)));
                    }
                    pairs.put(pair.toString(), connectors);
                }
                out.put("pairs", pairs);
            } catch (Exception e) {
                out.put("error", e.getMessage());
            }
            String name = in.getName().replaceFirst("\\.properties$", ".json");
            json.writeValue(new File(outDir, name), out);
        }
    }
}
