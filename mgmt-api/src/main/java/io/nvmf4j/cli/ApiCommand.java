package io.nvmf4j.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** A leaf command: reaches the API through the root's client and prints a table or the API's JSON. */
abstract class ApiCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    Nvmfctl root() {
        return (Nvmfctl) spec.root().userObject();
    }

    ApiClient api() {
        return root().api();
    }

    ObjectMapper mapper() {
        return root().mapper();
    }

    ObjectNode object() {
        return mapper().createObjectNode();
    }

    boolean json() {
        return root().json;
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }

    /** A warning on stderr (the output on stdout stays a clean document); a JSON line with --json. */
    void warn(String message) {
        if (json()) {
            err().println(object().put("warning", message).toString());
        } else {
            err().println("nvmfctl: warning: " + message);
        }
        err().flush();
    }

    void printJson(JsonNode node) {
        try {
            out().println(mapper().writerWithDefaultPrettyPrinter().writeValueAsString(node));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        out().flush();
    }

    /** An answer as JSON (--json) or as aligned "key  value" lines. */
    void printOne(JsonNode node) {
        if (json()) {
            printJson(node);
        } else {
            Table.printObject(out(), node);
        }
    }

    /** One line of human output. */
    void say(String line) {
        out().println(line);
        out().flush();
    }

    /**
     * The confirmation of a change the API answers without a body (204): {@code line}, or with --json
     * {@code {"<verb>": what}}, e.g. {@code {"deleted": {"bdev": "m1"}}}.
     */
    void done(String line, String verb, ObjectNode what) {
        if (json()) {
            ObjectNode o = object();
            o.set(verb, what);
            printJson(o);
        } else {
            say(line);
        }
    }

    /** "/api/v1/subsystems/{nqn}" with the NQN encoded. */
    static String subsystemPath(String nqn) {
        return ApiClient.V1 + "/subsystems/" + ApiClient.seg(nqn);
    }
}
