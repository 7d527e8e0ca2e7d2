package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.service.api.ApiContract.Answer;
import io.nvmf4j.service.api.ApiContract.Many;
import io.nvmf4j.service.api.ApiContract.Op;
import io.nvmf4j.service.api.ApiContract.Text;

import java.io.IOException;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.nvmf4j.service.api.ApiContract.BDEV_VIEW;
import static io.nvmf4j.service.api.ApiContract.ETAG;
import static io.nvmf4j.service.api.ApiContract.IF_MATCH;
import static io.nvmf4j.service.api.ApiContract.JSON;
import static io.nvmf4j.service.api.ApiContract.OPERATIONS;
import static io.nvmf4j.service.api.ApiContract.RESTART_REQUIRED;

/**
 * Writes the OpenAPI document at build time (mgmt-api's process-classes phase): the operations of
 * {@link ApiContract#OPERATIONS} with the schemas {@link ApiSchemas} generates from the Java types they name,
 * described by those types' Javadoc ({@link ModelJavadoc}, read from the source roots given). Nothing generated is
 * checked in; a field added to the config model shows in the next build's document.
 *
 * <p>Usage: {@code OpenApiGenerator OUTPUT-FILE SOURCE-ROOT...}
 */
public final class OpenApiGenerator {
    private static final Map<String, String> PARAMS = Map.of(
        "name", "Bdev name",
        "nqn", "Subsystem NQN (URL-encoded)",
        "nsid", "Namespace ID",
        "hostnqn", "Host NQN (URL-encoded)",
        "transport", "Transport type",
        "address", "IPv4 or IPv6 literal (URL-encoded)",
        "port", "Transport service ID (port)");

    private static final Map<String, String> HEADERS = Map.of(
        ETAG, "The document's version: a strong entity tag, quoted",
        RESTART_REQUIRED, "Comma-separated start-up settings (tcp.maxQueueDepth, cores, ...) whose stored value "
            + "differs from the one in effect; absent when none",
        "WWW-Authenticate", "Bearer realm=\"nvmf4j\"",
        "Allow", "The methods the path has");

    private OpenApiGenerator() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: OpenApiGenerator OUTPUT-FILE SOURCE-ROOT...");
            System.exit(2);
        }
        List<Path> roots = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            roots.add(Path.of(args[i]));
        }
        ObjectNode doc = build(ModelJavadoc.read(roots));
        Path out = Path.of(args[0]).toAbsolutePath();
        Files.createDirectories(out.getParent());
        Files.writeString(out, ConfigStore.mapper().copy().enable(SerializationFeature.INDENT_OUTPUT)
            .writeValueAsString(doc) + "\n");
    }

    /** The document, with descriptions from {@code javadoc} ("Class" and "Class.field" keys). */
    static ObjectNode build(Map<String, String> javadoc) {
        ObjectMapper m = ConfigStore.mapper();
        ApiSchemas schemas = ApiSchemas.create(javadoc);
        ObjectNode doc = m.createObjectNode().put("openapi", "3.1.0");
        doc.putObject("info").put("title", "nvmf4j management API").put("version", "1")
            .put("description", "See docs/rest-api.md. Every route except /api/v1/health* needs "
                + "Authorization: Bearer <token>. Every error answers {\"error\": reason, \"field\": path-or-null}; "
                + "a method a path does not have answers 405 with Allow (components.responses.MethodNotAllowed). "
                + "The schemas are generated from the service's config model.");
        doc.putArray("security").addObject().putArray("bearer");
        ObjectNode paths = doc.putObject("paths");
        for (Op<?> op : OPERATIONS) {
            ObjectNode item = paths.has(op.template()) ? (ObjectNode) paths.get(op.template())
                : paths.putObject(op.template());
            item.set(op.method.toLowerCase(), operation(m, schemas, op));
        }
        ObjectNode components = doc.putObject("components");
        components.putObject("securitySchemes").putObject("bearer").put("type", "http").put("scheme", "bearer");
        ObjectNode notAllowed = components.putObject("responses").putObject("MethodNotAllowed")
            .put("description", "The path exists but not with this method");
        notAllowed.putObject("headers").set("Allow", header(m, "Allow"));
        notAllowed.putObject("content").putObject(JSON).set("schema", schemas.ref(Views.Error.class));
        ObjectNode definitions = schemas.definitions();
        definitions.set(BDEV_VIEW, bdevView(definitions));
        components.set("schemas", definitions);
        return doc;
    }

    private static ObjectNode operation(ObjectMapper m, ApiSchemas schemas, Op<?> op) {
        ObjectNode o = m.createObjectNode().put("operationId", op.id).put("summary", op.summary);
        if (op.description != null) {
            o.put("description", op.description);
        }
        if (!op.authenticated) {
            o.putArray("security");
        }
        ArrayNode params = m.createArrayNode();
        for (String p : op.params()) {
            ObjectNode schema = p.equals("nsid") || p.equals("port") ? m.createObjectNode().put("type", "integer")
                : m.createObjectNode().put("type", "string");
            if (p.equals("transport")) {
                EngineCapabilities.allTransports().forEach(schema.putArray("enum")::add);
            }
            params.addObject().put("name", p).put("in", "path").put("required", true)
                .put("description", PARAMS.getOrDefault(p, p)).set("schema", schema);
        }
        for (ApiContract.Query q : op.query) {
            ObjectNode schema = m.createObjectNode().put("type", q.integer() ? "integer" : "string");
            if (q.integer()) {
                schema.put("minimum", q.min()).put("maximum", q.max()).put("default", q.dflt());
            }
            params.addObject().put("name", q.name()).put("in", "query").put("required", false)
                .put("description", q.description()).set("schema", schema);
        }
        if (op.ifMatch) {
            params.addObject().put("name", IF_MATCH).put("in", "header").put("required", false)
                .put("description", "Replace only if the document's ETag is one of these (or * for any); "
                    + "absent: unconditionally").putObject("schema").put("type", "string");
        }
        if (!params.isEmpty()) {
            o.set("parameters", params);
        }
        if (op.request != null) {
            o.putObject("requestBody").put("required", true).putObject("content").putObject(JSON)
                .set("schema", schema(m, schemas, op.request));
        }
        ObjectNode responses = o.putObject("responses");
        for (Answer a : op.allAnswers()) {
            ObjectNode r = responses.putObject(Integer.toString(a.status())).put("description", a.description());
            if (!a.headers().isEmpty()) {
                ObjectNode h = r.putObject("headers");
                a.headers().forEach(name -> h.set(name, header(m, name)));
            }
            if (a.body() instanceof Text t) {
                r.putObject("content").putObject(t.contentType()).putObject("schema").put("type", "string");
            } else if (a.body() != null) {
                r.putObject("content").putObject(JSON).set("schema", schema(m, schemas, a.body()));
            }
        }
        return o;
    }

    private static ObjectNode header(ObjectMapper m, String name) {
        ObjectNode h = m.createObjectNode().put("description", HEADERS.getOrDefault(name, name));
        h.putObject("schema").put("type", "string");
        return h;
    }

    private static ObjectNode schema(ObjectMapper m, ApiSchemas schemas, Object body) {
        if (body instanceof Many many) {
            ObjectNode array = m.createObjectNode().put("type", "array");
            array.set("items", schema(m, schemas, many.item()));
            return array;
        }
        if (body instanceof String name) {
            return m.createObjectNode().put("$ref", "#/" + ApiSchemas.PATH + "/" + name);
        }
        if (body == ObjectNode.class) {
            return m.createObjectNode().put("type", "object");
        }
        return schemas.ref((Type) body);
    }

    /** The bdev as configured plus usedBy (see ApiRoutes#bdevView). */
    private static JsonNode bdevView(ObjectNode definitions) {
        ObjectNode view = ApiSchemas.resolve(definitions,
            definitions.objectNode().put("$ref", "#/" + ApiSchemas.PATH + "/BdevConfig")).deepCopy();
        ObjectNode usedBy = ((ObjectNode) view.with("properties")).putObject("usedBy")
            .put("description", "nqn/nsid of the namespace the bdev backs, or null");
        usedBy.putArray("type").add("string").add("null");
        view.withArray("required").add("usedBy");
        return view;
    }
}
