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
import io.nvmf4j.config.Range;
import io.nvmf4j.config.Ranges;
import io.nvmf4j.config.RdmaTransportConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SpdkConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.TcpTransportConfig;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.runtime.IdleStrategyNames;
import io.nvmf4j.runtime.SocketIoNames;

import java.lang.reflect.Field;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The schemas of the OpenAPI document, generated from the Java types the API reads and writes (the config
 * model in {@code io.nvmf4j.config}, {@link Bodies}, {@link Views}) with victools' jsonschema-generator and its
 * Jackson module (property names, {@code @JsonPropertyDescription}), described by the types' Javadoc. Added here: the enums the model keeps in code
 * ({@link #ENUMS}) and the numeric bounds its fields declare ({@link Range}, collected in {@link #BOUNDS}; ApiSchemasTest
 * checks both against {@link io.nvmf4j.config.ConfigValidator}), defaults read from a fresh instance of each config class, and no
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
    /** Numeric bounds, by "Class.field": the {@link Range} each field of the model declares, which the validator applies. */
    static final Map<String, Bound> BOUNDS = new LinkedHashMap<>();

    static {
        ENUMS.put(key(TargetConfig.class, "engine"), Engines.names());
        ENUMS.put(key(TargetConfig.class, "idleStrategy"), IdleStrategyNames.ALL);
        ENUMS.put(key(TargetConfig.class, "socketIo"), SocketIoNames.ALL);
        List<String> transports = EngineCapabilities.allTransports();
        ENUMS.put(key(ListenerConfig.class, "transport"), transports);
        ENUMS.put(key(ReferralConfig.class, "transport"), transports);
        ENUMS.put(key(BdevConfig.class, "type"), List.of("malloc", "null", "file", "rbd", "error"));
        ENUMS.put(key(BdevConfig.class, "blockSize"), List.of(512, 4096));
        ENUMS.put(key(NamespaceConfig.class, "reservations"), NamespaceConfig.RESERVATIONS);
        ENUMS.put(key(BdevConfig.class, "ioEngine"), BdevConfig.IO_ENGINES);

        for (Class<?> t : List.of(TargetConfig.class, TcpTransportConfig.class, RdmaTransportConfig.class,
            SpdkConfig.class, ApiConfig.class, BdevConfig.class, SubsystemConfig.class, NamespaceConfig.class,
            ListenerConfig.class, ReferralConfig.class)) {
            for (Field f : Ranges.fields(t)) {
                Range r = f.getAnnotation(Range.class);
                BOUNDS.put(key(t, f.getName()), new Bound(r.min(), r.max() == Long.MAX_VALUE ? null : r.max(),
                    r.multipleOf() == 0 ? null : r.multipleOf()));
            }
        }
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
