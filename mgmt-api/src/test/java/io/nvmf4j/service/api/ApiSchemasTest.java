package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.config.ApiConfig;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.RdmaTransportConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SpdkConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.TcpTransportConfig;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The enums and bounds the document states are the validator's: each bound is accepted and one step beyond it is
 * refused for that field, each enum value is accepted and another is refused; and the generated schemas carry
 * them, the model's defaults and every field of the model.
 */
class ApiSchemasTest {
    /** A valid document with one of each object whose fields have bounds. */
    private static TargetConfig document() {
        TargetConfig c = TestService.baseConfig();
        BdevConfig file = new BdevConfig("f0", "file", 4096, 16);
        c.storage = io.nvmf4j.it.TestTarget.testStorage();
        file.path = c.storage.fileDirectories.get(0) + "/nvmf4j-api-schemas-test-f0"; // validated, never created
        c.bdevs.add(file);
        c.referrals.add(new ReferralConfig("tcp", "192.0.2.1", 8009));
        return c;
    }

    /** The object of {@code c} a "Class.field" key refers to, and its path in problems. */
    private record Target(Object owner, String path) {
    }

    private static Target target(TargetConfig c, String key) {
        String type = key.substring(0, key.indexOf('.'));
        String field = key.substring(key.indexOf('.') + 1);
        return switch (type) {
            case "TargetConfig" -> new Target(c, field);
            case "TcpTransportConfig" -> new Target(c.tcp, "tcp." + field);
            case "RdmaTransportConfig" -> new Target(c.rdma, "rdma." + field);
            case "SpdkConfig" -> new Target(c.spdk, "spdk." + field);
            case "ApiConfig" -> new Target(c.api, "api." + field);
            case "BdevConfig" -> new Target(c.bdevs.get(1), "bdevs[1]." + field);
            case "SubsystemConfig" -> new Target(c.subsystems.get(0), "subsystems[0]." + field);
            case "ListenerConfig" -> new Target(c.subsystems.get(0).listeners.get(0), "subsystems[0].listeners[0]."
                + field);
            case "ReferralConfig" -> new Target(c.referrals.get(0), "referrals[0]." + field);
            case "NamespaceConfig" -> new Target(c.subsystems.get(0).namespaces.get(0), "subsystems[0].namespaces[0]."
                + field);
            default -> null;
        };
    }

    /** The problems of the document with {@code key} set to {@code value} that concern that field. */
    private static List<String> problemsWith(String key, Object value) throws Exception {
        TargetConfig c = document();
        if (key.equals("RdmaTransportConfig.dataBuffers")) {
            c.rdma.mdtsBytes = 8192; // dataBuffers x mdtsBytes must also stay below 2 GiB
        }
        if (key.equals("SubsystemConfig.maxNamespaces")) {
            c.tcp.mdtsBytes = 1 << 20; // the java engine's ANA log must also fit in one transfer (AnaConfigTest)
        }
        Target t = target(c, key);
        if (t.owner() instanceof NamespaceConfig n && NamespaceConfig.RESERVATIONS_SHARED.equals(value)) {
            rbd(c.bdev(n.bdev)); // a state every instance reads: the namespace's bdev is an rbd image
        }
        Field f = t.owner().getClass().getField(key.substring(key.indexOf('.') + 1));
        f.set(t.owner(), f.getType() == long.class ? ((Number) value).longValue()
            : f.getType() == int.class || f.getType() == Integer.class ? ((Number) value).intValue() : value);
        List<String> mine = new ArrayList<>();
        try {
            ConfigValidator.validate(c);
        } catch (ConfigException e) {
            String prefix = t.path().substring(0, t.path().lastIndexOf('.') + 1);
            for (String p : e.problems()) {
                String at = p.split(": ", 2)[0];
                if (at.equals(t.path()) || at.startsWith(prefix) && at.contains(f.getName())) {
                    mine.add(p);
                }
            }
        }
        return mine;
    }

    /** Makes {@code b} an rbd bdev (its cluster is never reached: the document is only validated). */
    private static void rbd(BdevConfig b) {
        b.type = "rbd";
        b.pool = "rbd";
        b.image = "img";
        b.cephConf = "/etc/ceph/ceph.conf";
        b.clientName = "client.admin";
        b.keyring = "/etc/ceph/ceph.client.admin.keyring";
        b.path = null;
    }

    @Test
    void theBaseDocumentIsValid() {
        ConfigValidator.validate(document());
    }

    @Test
    void everyBoundIsTheValidators() throws Exception {
        int checked = 0;
        for (Map.Entry<String, ApiSchemas.Bound> e : ApiSchemas.BOUNDS.entrySet()) {
            String key = e.getKey();
            if (key.equals("NamespaceConfig.nsid")) {
                continue; // 0 picks the lowest free nsid in POST; a document holds the assigned one (1..maxNamespaces)
            }
            ApiSchemas.Bound b = e.getValue();
            if (b.min() != null) {
                assertThat(problemsWith(key, b.min())).as("%s = minimum %s", key, b.min()).isEmpty();
                assertThat(problemsWith(key, b.min() - 1)).as("%s = %s", key, b.min() - 1).isNotEmpty();
                checked++;
            }
            if (b.max() != null) {
                assertThat(problemsWith(key, b.max())).as("%s = maximum %s", key, b.max()).isEmpty();
                assertThat(problemsWith(key, b.max() + 1)).as("%s = %s", key, b.max() + 1).isNotEmpty();
                checked++;
            }
            if (b.multipleOf() != null) {
                assertThat(problemsWith(key, b.min() + b.multipleOf())).as("%s one step", key).isEmpty();
                assertThat(problemsWith(key, b.min() + b.multipleOf() / 2)).as("%s half a step", key).isNotEmpty();
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(50);
    }

    @Test
    void everyEnumIsTheValidators() throws Exception {
        for (Map.Entry<String, List<?>> e : ApiSchemas.ENUMS.entrySet()) {
            for (Object v : e.getValue()) {
                assertThat(problemsWith(e.getKey(), v)).as("%s = %s", e.getKey(), v).isEmpty();
            }
            Object other = e.getValue().get(0) instanceof Integer ? (Object) 1024 : "bogus";
            assertThat(problemsWith(e.getKey(), other)).as("%s = %s", e.getKey(), other).isNotEmpty();
        }
    }

    /** The document the service serves is what the generator makes from today's sources (not a stale build). */
    @Test
    void theServedDocumentIsTheGeneratorsOutputWithTheModelsJavadoc() throws Exception {
        Map<String, String> javadoc = ModelJavadoc.read(List.of(Path.of("../nvmf-api/src/main/java/io/nvmf4j/config"),
            Path.of("src/main/java/io/nvmf4j/service/api")));
        assertThat(Http.parse(ApiContract.document())).isEqualTo(Http.parse(OpenApiGenerator.build(javadoc).toString()));
        assertThat(javadoc.get("TcpTransportConfig.maxQueueDepth"))
            .isEqualTo("Largest I/O queue size (entries) a host may ask for.");
        assertThat(javadoc.get("TargetConfig.engine")).as("{@code} as plain text").isEqualTo("Which engine carries "
            + "the target: java (default; our own data path) or spdk (SPDK's, through spdk-jni). Read at start only.");
        assertThat(javadoc.get("TargetConfig")).as("first paragraph only").endsWith("listeners).");
        JsonNode schemas = Http.parse(ApiContract.document()).get("components").get("schemas");
        assertThat(schemas.get("RdmaTransportConfig").get("properties").get("srqDepth").get("description").asText())
            .isEqualTo(javadoc.get("RdmaTransportConfig.srqDepth"));
        assertThat(schemas.get("TargetConfig").get("description").asText()).isEqualTo(javadoc.get("TargetConfig"));
    }

    @Test
    void theSchemasCarryEveryModelFieldWithItsEnumBoundsAndDefault() {
        JsonNode schemas = Http.parse(ApiContract.document()).get("components").get("schemas");
        for (Class<?> type : List.of(TargetConfig.class, TcpTransportConfig.class, RdmaTransportConfig.class,
            SpdkConfig.class, ApiConfig.class, BdevConfig.class, SubsystemConfig.class, NamespaceConfig.class,
            ListenerConfig.class, ReferralConfig.class)) {
            JsonNode schema = schemas.get(type.getSimpleName());
            assertThat(schema).as(type.getSimpleName()).isNotNull();
            assertThat(schema.get("additionalProperties").asBoolean(true)).as("unknown fields refused").isFalse();
            for (Field f : type.getFields()) {
                if (!java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                    assertThat(schema.get("properties").has(f.getName())).as("%s.%s", type.getSimpleName(), f.getName())
                        .isTrue();
                }
            }
        }
        JsonNode target = schemas.get("TargetConfig").get("properties");
        assertThat(target.get("engine").get("enum")).hasSize(2);
        assertThat(target.get("engine").get("default").asText()).isEqualTo("java");
        assertThat(target.get("idleStrategy").get("enum").toString()).isEqualTo("[\"busy\",\"backoff\",\"interrupt\"]");
        assertThat(target.get("rdma").get("$ref").asText()).isEqualTo("#/components/schemas/RdmaTransportConfig");
        JsonNode transport = schemas.get("ListenerConfig").get("properties").get("transport");
        assertThat(transport.get("enum").toString()).isEqualTo("[\"tcp\",\"rdma\"]");
        JsonNode depth = schemas.get("RdmaTransportConfig").get("properties").get("maxQueueDepth");
        assertThat(depth.get("minimum").asInt()).isEqualTo(16);
        assertThat(depth.get("maximum").asInt()).isEqualTo(1024);
        assertThat(depth.get("default").asInt()).isEqualTo(new RdmaTransportConfig().maxQueueDepth);
        assertThat(schemas.get("BdevView").get("properties").has("usedBy")).isTrue();
        assertThat(schemas.get("BdevConfig").get("properties").get("type").get("enum").toString())
            .isEqualTo("[\"malloc\",\"null\",\"file\",\"rbd\",\"error\"]");
    }
}
