package org.apache.kafka.connect.runtime;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.connect.connector.policy.AllConnectorClientConfigOverridePolicy;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfos;
import org.apache.kafka.connect.runtime.standalone.StandaloneConfig;
import org.apache.kafka.connect.runtime.standalone.StandaloneHerder;
import org.apache.kafka.connect.storage.FileOffsetBackingStore;
import org.apache.kafka.connect.util.TemporaryStage;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

// Runs Connect's own connector validation (AbstractHerder.validateConnectorConfig, in a
// standalone herder whose worker uses ByteArrayConverter) on each scenario of SCENARIOS, a
// JSON object of name -> connector config (null values allowed), and writes the ConfigInfos of
// each to OUTDIR/validate-<name>.json. It lives in Connect's package to reach the
// package-private method. Usage: ValidateDump SCENARIOS OUTDIR
public class ValidateDump {
    public static void main(String[] args) throws Exception {
        ObjectMapper om = new ObjectMapper();
        Map<String, String> workerProps = new HashMap<>();
        workerProps.put("plugin.discovery", "only_scan");
        workerProps.put("bootstrap.servers", "localhost:1");
        workerProps.put("key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
        workerProps.put("value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
        workerProps.put("header.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
        workerProps.put("offset.storage.file.filename", Files.createTempFile("offsets", "").toString());
        Plugins plugins = new Plugins(workerProps);
        // No broker: answer the cluster id lookup locally.
        StandaloneConfig workerConfig = new StandaloneConfig(workerProps) {
            @Override
            public String kafkaClusterId() {
                return "cluster";
            }
        };
        AllConnectorClientConfigOverridePolicy policy = new AllConnectorClientConfigOverridePolicy();
        Worker worker = new Worker("worker", Time.SYSTEM, plugins, workerConfig, new FileOffsetBackingStore(new JsonConverter()), policy);
        AbstractHerder herder = new StandaloneHerder(worker, "cluster", policy);
        Function<String, TemporaryStage> noStages = description -> null;

        Map<String, Map<String, String>> scenarios = om.readValue(new File(args[0]),
                new TypeReference<LinkedHashMap<String, Map<String, String>>>() { });
        for (Map.Entry<String, Map<String, String>> e : scenarios.entrySet()) {
            String result;
            try {
                ConfigInfos infos = herder.validateConnectorConfig(e.getValue(), noStages, false);
                result = om.writeValueAsString(infos);
            } catch (Throwable t) {
                result = om.writeValueAsString(Map.of("exception", t.toString()));
            }
            Files.writeString(Path.of(args[1], "validate-" + e.getKey() + ".json"), result);
        }
        System.exit(0);
    }
}
