import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.runtime.AbstractHerder;
import org.apache.kafka.connect.runtime.SourceConnectorConfig;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.runtime.rest.entities.ConfigKeyInfo;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

// Writes what GET /connector-plugins/{plugin}/config returns for the MM2 connectors, computed
// the way AbstractHerder.connectorPluginConfig computes it. Usage: PluginConfigDump OUTDIR
public class PluginConfigDump {
    public static void main(String[] args) throws Exception {
        ObjectMapper om = new ObjectMapper();
        Plugins plugins = new Plugins(Map.of("plugin.discovery", "only_scan"));
        String[] classes = {
            "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
            "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
        };
        for (String c : classes) {
            Connector connector = (Connector) Class.forName(c).getDeclaredConstructor().newInstance();
            Map<String, ConfigDef.ConfigKey> keys = new LinkedHashMap<>(connector.config().configKeys());
            SourceConnectorConfig.enrichedConfigDef(plugins, c).configKeys().forEach(keys::putIfAbsent);
            List<ConfigKeyInfo> infos = new ArrayList<>();
            for (ConfigDef.ConfigKey k : keys.values()) {
                infos.add(AbstractHerder.convertConfigKey(k));
            }
            String simple = c.substring(c.lastIndexOf('.') + 1);
            Files.writeString(Path.of(args[0], "plugin-config-" + simple + ".json"), om.writeValueAsString(infos));
        }
    }
}
