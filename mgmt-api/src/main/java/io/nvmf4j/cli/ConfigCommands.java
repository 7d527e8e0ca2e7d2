package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/** {@code nvmfctl config}: the whole document ({@code /api/v1/config}). */
@Command(name = "config", description = {"The whole configuration document (nvmf4j's JSON): export, import.",
    "To convert an nvmetcli config.json, see 'nvmfctl import-nvmetcli'."},
    subcommands = {ConfigCommands.Export.class, ConfigCommands.Import.class})
final class ConfigCommands extends Group {
    static final String PATH = ApiClient.V1 + "/config";

    /** A summary line of a document: how many of each object it holds. */
    static String summary(JsonNode doc) {
        int namespaces = 0;
        int listeners = 0;
        for (JsonNode s : doc.path("subsystems")) {
            namespaces += s.path("namespaces").size();
            listeners += s.path("listeners").size();
        }
        return doc.path("bdevs").size() + " bdevs, " + doc.path("subsystems").size() + " subsystems, "
            + namespaces + " namespaces, " + listeners + " listeners, " + doc.path("referrals").size() + " referrals";
    }

    /** The document in an answer of {@code GET} or {@code PUT /api/v1/config}. */
    static JsonNode document(JsonNode answer) {
        return answer;
    }

    /**
     * "applied FILE: 1 bdevs, ...", and the start-up settings that apply only at the next start when the API names
     * them ({@code restartRequired}: its {@value ApiClient#RESTART_REQUIRED} header).
     */
    static String applied(Object file, JsonNode answer, String restartRequired) {
        return "applied " + file + ": " + summary(document(answer))
            + (restartRequired == null || restartRequired.isBlank() ? ""
            : "; at the next start (restart required): " + restartRequired);
    }

    /** PUT the document; the answer (the live document) with the header naming what waits for a restart. */
    static ApiClient.Response put(ApiClient api, String text) {
        ApiClient.Response r = api.exchange("PUT", PATH, text);
        if (r.status() != 200) {
            throw api.failure(r);
        }
        return r;
    }

    @Command(name = "export", description = "Print the live document (always JSON), or write it to a file.")
    static final class Export extends ApiCommand {
        @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "Write to FILE instead of stdout.")
        Path output;

        @Override
        public Integer call() {
            JsonNode doc = api().get(PATH);
            if (doc.path("api") instanceof ObjectNode a) {
                a.remove("token"); // the service leaves it out; an older one may not
            }
            if (output == null) {
                printJson(doc);
                return 0;
            }
            try {
                writePrivate(output, mapper().writerWithDefaultPrettyPrinter().writeValueAsString(doc) + "\n");
            } catch (IOException e) {
                throw CliException.usage("cannot write " + output + ": " + e.getMessage());
            }
            done("wrote " + output + ": " + summary(doc), "wrote", object().put("file", output.toString()));
            return 0;
        }
    }

    /**
     * Writes {@code text} to {@code file} with mode 0600: a new file is created so, an existing one is made so before
     * it is written (the document names every host and device of the target).
     */
    static void writePrivate(Path file, String text) throws IOException {
        Set<PosixFilePermission> owner = PosixFilePermissions.fromString("rw-------");
        if (Files.exists(file)) {
            Files.setPosixFilePermissions(file, owner);
        } else {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(owner));
        }
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    @Command(name = "import", description = {"Apply a whole nvmf4j document (as 'config export' writes it) to the "
        + "running target: validated, then applied as a whole or not at all.",
        "Not for nvmetcli's config.json: convert that with 'nvmfctl import-nvmetcli'."})
    static final class Import extends ApiCommand {
        @Parameters(paramLabel = "FILE", description = "An nvmf4j configuration document (JSON).")
        Path file;

        @Override
        public Integer call() {
            String text;
            try {
                text = Files.readString(file, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw CliException.usage("cannot read " + file + ": " + e.getMessage());
            }
            ApiClient.Response r = put(api(), text);
            if (json()) {
                printJson(r.json(mapper()));
            } else {
                say(applied(file, r.json(mapper()), r.restartRequired()));
            }
            return 0;
        }
    }
}
