package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.victools.jsonschema.generator.FieldScope;
import com.github.victools.jsonschema.generator.Option;
import com.github.victools.jsonschema.generator.OptionPreset;
import com.github.victools.jsonschema.generator.SchemaBuilder;
import com.github.victools.jsonschema.generator.SchemaGenerator;
import com.github.victools.jsonschema.generator.SchemaGeneratorConfigBuilder;
import com.github.victools.jsonschema.generator.SchemaVersion;
import com.github.victools.jsonschema.generator.naming.DefaultSchemaDefinitionNamingStrategy;
import com.github.victools.jsonschema.module.jackson.JacksonModule;
import io.nvmf4j.config.ApiConfig;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.RdmaTransportConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SpdkConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.TcpTransportConfig;
import io.nvmf4j.core.TransportLimits;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.runtime.IdleStrategies;

import java.lang.reflect.Field;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The schemas of the OpenAPI document, generated from the Java types the API reads and writes (the config
 * model in {@code io.nvmf4j.config}, {@link Bodies}, {@link Views}) with victools' jsonschema-generator and its
 * Jackson module (property names, {@code @JsonPropertyDescription}), described by the types' Javadoc. Added here: the enums and numeric bounds
 * that the model keeps in code ({@link #ENUMS}, {@link #BOUNDS}; ApiSchemasTest checks them against
 * {@link io.nvmf4j.config.ConfigValidator}), defaults read from a fresh instance of each config class, and no
 * unknown property (the mapper refuses them).
 */
final class ApiSchemas {
    /** Where the definitions go in the document. */
    static final String PATH = "components/schemas";
    private static final String MODEL_PACKAGE = TargetConfig.class.getPackageName();

    /** Numeric bounds of a field: inclusive minimum and maximum (null: none) and a step (null: none). */
    record Bound(Long min, Long max, Long multipleOf) {
        static Bound of(long min, long max) {
            return new Bound(min, max, null);
        }
    }

    /** Allowed string (or number) values, by "Class.field". */
    static final Map<String, List<?>> ENUMS = new LinkedHashMap<>();
    /** Numeric bounds the validator applies, by "Class.field". */
    static final Map<String, Bound> BOUNDS = new LinkedHashMap<>();

    static {
        ENUMS.put(key(TargetConfig.class, "engine"), Engines.names());
        ENUMS.put(key(TargetConfig.class, "idleStrategy"),
            List.of(IdleStrategies.BUSY, IdleStrategies.BACKOFF, IdleStrategies.INTERRUPT));
        List<String> transports = EngineCapabilities.allTransports();
        ENUMS.put(key(ListenerConfig.class, "transport"), transports);
        ENUMS.put(key(ReferralConfig.class, "transport"), transports);
        ENUMS.put(key(BdevConfig.class, "type"), List.of("malloc", "null", "file", "rbd", "error"));
        ENUMS.put(key(BdevConfig.class, "blockSize"), List.of(512, 4096));
        ENUMS.put(key(NamespaceConfig.class, "reservations"), NamespaceConfig.RESERVATIONS);
        ENUMS.put(key(BdevConfig.class, "ioEngine"), BdevConfig.IO_ENGINES);

        BOUNDS.put(key(TargetConfig.class, "cores"), Bound.of(1, 256));
        BOUNDS.put(key(TargetConfig.class, "commandQuiesceTimeMs"),
            Bound.of(TargetConfig.MIN_COMMAND_QUIESCE_TIME_MS, TargetConfig.MAX_COMMAND_QUIESCE_TIME_MS));
        BOUNDS.put(key(TargetConfig.class, "authTimeoutMs"),
            Bound.of(TargetConfig.MIN_AUTH_TIMEOUT_MS, TargetConfig.MAX_AUTH_TIMEOUT_MS));
        for (Class<?> t : List.of(TcpTransportConfig.class, RdmaTransportConfig.class)) {
            BOUNDS.put(key(t, "inCapsuleDataSize"), new Bound(0L, 131072L, 16L));
            BOUNDS.put(key(t, "maxQueueDepth"), Bound.of(16, 1024));
            BOUNDS.put(key(t, "maxIoQueues"), Bound.of(1, 128));
            BOUNDS.put(key(t, "maxConnectionsPerListener"), Bound.of(1, 1 << 20));
            BOUNDS.put(key(t, "maxConnectionsPerHost"), Bound.of(1, 1 << 20));
        }
        BOUNDS.put(key(TcpTransportConfig.class, "mdtsBytes"), Bound.of(TransportLimits.MIN_MDTS_BYTES, 8 << 20));
        BOUNDS.put(key(TcpTransportConfig.class, "maxH2cData"), new Bound(4096L, (long) 8 << 20, 4L));
        BOUNDS.put(key(TcpTransportConfig.class, "connectTimeoutMs"), Bound.of(0, 3_600_000));
        BOUNDS.put(key(TcpTransportConfig.class, "socketBufferBytes"), Bound.of(0, 1 << 30));
        BOUNDS.put(key(RdmaTransportConfig.class, "mdtsBytes"), Bound.of(TransportLimits.MIN_MDTS_BYTES, 1 << 20));
        BOUNDS.put(key(RdmaTransportConfig.class, "srqDepth"), Bound.of(16, 16384));
        BOUNDS.put(key(RdmaTransportConfig.class, "dataBuffers"), Bound.of(4, 16384));
        BOUNDS.put(key(RdmaTransportConfig.class, "cqSize"), Bound.of(256, 1 << 20));
        BOUNDS.put(key(RdmaTransportConfig.class, "maxReadDepth"), Bound.of(1, 255));
        BOUNDS.put(key(RdmaTransportConfig.class, "maxParkedCapsules"), Bound.of(1, 1024));
        BOUNDS.put(key(RdmaTransportConfig.class, "rnrRetryCount"), Bound.of(0, 7));
        BOUNDS.put(key(SpdkConfig.class, "memSizeMb"), Bound.of(512, 1 << 20));
        BOUNDS.put(key(SpdkConfig.class, "callTimeoutMs"), Bound.of(1000, 600_000));
        BOUNDS.put(key(SpdkConfig.class, "sharedBuffers"), Bound.of(0, 1 << 20));
        BOUNDS.put(key(ApiConfig.class, "port"), Bound.of(0, 65535));
        BOUNDS.put(key(ApiConfig.class, "requestsPerSecond"), Bound.of(1, ApiConfig.MAX_REQUESTS_PER_SECOND));
        BOUNDS.put(key(ApiConfig.class, "requestBurst"), Bound.of(1, ApiConfig.MAX_REQUESTS_PER_SECOND));
        BOUNDS.put(key(ApiConfig.class, "requestTimeoutSeconds"), Bound.of(1, ApiConfig.MAX_TIMEOUT_SECONDS));
        BOUNDS.put(key(ApiConfig.class, "idleTimeoutSeconds"), Bound.of(1, ApiConfig.MAX_TIMEOUT_SECONDS));
        BOUNDS.put(key(BdevConfig.class, "ioWorkers"), Bound.of(1, BdevConfig.MAX_IO_WORKERS));
        BOUNDS.put(key(BdevConfig.class, "ioQueueDepth"), Bound.of(1, BdevConfig.MAX_IO_QUEUE_DEPTH));
        BOUNDS.put(key(BdevConfig.class, "numBlocks"), new Bound(0L, null, null));
        BOUNDS.put(key(SubsystemConfig.class, "maxNamespaces"), Bound.of(1, 1024));
        BOUNDS.put(key(SubsystemConfig.class, "minCntlid"), Bound.of(1, 0xFFEF));
        BOUNDS.put(key(SubsystemConfig.class, "maxCntlid"), Bound.of(1, 0xFFEF));
        BOUNDS.put(key(NamespaceConfig.class, "nsid"), Bound.of(0, 1024));
        BOUNDS.put(key(NamespaceConfig.class, "anaGroup"), Bound.of(1, io.nvmf4j.nvme.AnaLog.GROUPS_MAX));
        BOUNDS.put(key(ListenerConfig.class, "port"), Bound.of(0, 65535));
        BOUNDS.put(key(ReferralConfig.class, "port"), Bound.of(1, 65535));
    }

    private final SchemaBuilder builder;

    private ApiSchemas(ObjectMapper mapper, Map<String, String> javadoc) {
        SchemaGeneratorConfigBuilder config = new SchemaGeneratorConfigBuilder(mapper, SchemaVersion.DRAFT_2020_12,
            OptionPreset.PLAIN_JSON)
            .with(new JacksonModule())
            .with(Option.FORBIDDEN_ADDITIONAL_PROPERTIES_BY_DEFAULT, Option.DEFINITIONS_FOR_ALL_OBJECTS,
                Option.MAP_VALUES_AS_ADDITIONAL_PROPERTIES)
            .without(Option.SCHEMA_VERSION_INDICATOR);
        // OpenAPI component names are [a-zA-Z0-9._-]+: a map's "Map(String,String)" becomes "MapStringString"
        DefaultSchemaDefinitionNamingStrategy names = new DefaultSchemaDefinitionNamingStrategy();
        config.forTypesInGeneral().withDefinitionNamingStrategy((key, context) ->
            names.getDefinitionNameForKey(key, context).replaceAll("[^A-Za-z0-9._-]", ""));
        config.forFields()
            .withEnumResolver(f -> ENUMS.get(key(f)))
            .withNumberInclusiveMinimumResolver(f -> decimal(bound(f) == null ? null : bound(f).min()))
            .withNumberInclusiveMaximumResolver(f -> decimal(bound(f) == null ? null : bound(f).max()))
            .withNumberMultipleOfResolver(f -> decimal(bound(f) == null ? null : bound(f).multipleOf()))
            .withDefaultResolver(ApiSchemas::defaultOf)
            .withNullableCheck(f -> isView(f) ? f.getAnnotationConsideringFieldAndGetter(Views.Nullable.class) != null
                : null)
            .withRequiredCheck(ApiSchemas::isView)
            .withDescriptionResolver(f -> javadoc.get(key(f)));
        config.forTypesInGeneral().withDescriptionResolver(t -> javadoc.get(t.getType().getErasedType().getSimpleName()));
        this.builder = new SchemaGenerator(config.build()).buildMultipleSchemaDefinitions();
    }

    /**
     * A generator for one document, describing types and fields from {@code javadoc} ("Class", "Class.field"):
     * {@link #ref} the types it uses, then {@link #definitions()} once.
     */
    static ApiSchemas create(Map<String, String> javadoc) {
        return new ApiSchemas(ConfigStore.mapper(), javadoc);
    }

    /** A reference to the schema of {@code type} (its definition joins the document). */
    ObjectNode ref(Type type) {
        return builder.createSchemaReference(type);
    }

    /** Every definition referred to so far, by name; the references now point into {@link #PATH}. */
    ObjectNode definitions() {
        return builder.collectDefinitions(PATH);
    }

    static String key(Class<?> type, String field) {
        return type.getSimpleName() + "." + field;
    }

    private static String key(FieldScope f) {
        return key(f.getDeclaringType().getErasedType(), f.getDeclaredName());
    }

    private static Bound bound(FieldScope f) {
        return BOUNDS.get(key(f));
    }

    private static BigDecimal decimal(Long v) {
        return v == null ? null : BigDecimal.valueOf(v);
    }

    private static boolean isView(FieldScope f) {
        Class<?> owner = f.getDeclaringType().getErasedType();
        return owner.getEnclosingClass() == Views.class || owner.isAnnotationPresent(Views.Answer.class);
    }

    /** The value a fresh instance of a config class has (what an absent field means), for scalars. */
    private static Object defaultOf(FieldScope f) {
        Class<?> owner = f.getDeclaringType().getErasedType();
        Field field = f.getRawMember();
        if (!owner.getPackageName().equals(MODEL_PACKAGE) || f.isFakeContainerItemScope()) {
            return null;
        }
        try {
            Object value = field.get(owner.getConstructor().newInstance());
            return value instanceof Number || value instanceof Boolean || value instanceof String ? value : null;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** The schema node behind a reference of {@code definitions} ({@code {"$ref": "#/components/schemas/X"}}). */
    static JsonNode resolve(JsonNode definitions, JsonNode ref) {
        String r = ref.path("$ref").asText("");
        String prefix = "#/" + PATH + "/";
        return r.startsWith(prefix) ? definitions.path(r.substring(prefix.length())) : ref;
    }
}
