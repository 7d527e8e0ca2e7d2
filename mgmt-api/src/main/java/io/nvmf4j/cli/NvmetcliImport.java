package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code nvmfctl import-nvmetcli FILE [--apply]}: converts an nvmetcli {@code config.json} (see
 * {@link NvmetcliConverter}) and prints the nvmf4j document, warnings on stderr. With {@code --apply} the
 * converted bdevs, subsystems and referrals replace the running target's (as {@code nvmetcli restore}
 * replaces the kernel's), through {@code PUT /api/v1/config}; the live document's engine, cores, idleStrategy, socketIo,
 * tcp and api sections are kept, so the API address and token do not change. The old spelling
 * {@code nvmfctl import --nvmetcli FILE} ({@link Legacy}) still works, hidden, with a warning.
 *
 * <p>Listeners the target refuses by transport are dropped from the applied document with a warning naming
 * each, and the rest is applied; the printed document (without {@code --apply}) keeps them. Any other
 * refusal fails the whole import (exit 1) and changes nothing.
 */
abstract class NvmetcliImport extends ApiCommand {
    private static final Pattern LISTENER_TRANSPORT =
        Pattern.compile("subsystems\\[(\\d+)]\\.listeners\\[(\\d+)]\\.transport: ([^;]*)");

    /** nvmetcli's config.json, as the subclass takes it. */
    Path file;

    @Option(names = "--apply", description = "Apply the result to the running target (PUT /api/v1/config).")
    boolean apply;

    @Option(names = "--key-dir", paramLabel = "DIR", description = "Write the hosts' DH-HMAC-CHAP keys (inline in "
        + "nvmetcli's file) here, one file of mode 0600 each, and name them in the subsystems' hostKeys; the service "
        + "must be able to read them there. Without it the keys are not imported (a warning).")
    Path keyDir;

    @Option(names = "--block-size", paramLabel = "BYTES", defaultValue = "512",
        description = "Block size of the file bdevs: 512 or 4096 (default: ${DEFAULT-VALUE}).")
    int blockSize;

    /** {@code nvmfctl import-nvmetcli FILE}. */
    @Command(name = "import-nvmetcli", description = {"Convert an nvmetcli config.json (as 'nvmetcli save' writes it) "
        + "into an nvmf4j document and print it; unsupported parts are warnings on stderr.",
        "--apply replaces the running target's bdevs, subsystems and referrals with it, as 'nvmetcli restore' does "
            + "(engine, cores, transports and api stay); listeners whose transport the target refuses are dropped with "
            + "a warning.",
        "Not for nvmf4j's own documents: apply those with 'nvmfctl config import'.",
        "Example: nvmfctl import-nvmetcli /etc/nvmet/config.json > nvmf4j.json"})
    static final class Current extends NvmetcliImport {
        @Parameters(paramLabel = "FILE", description = "nvmetcli's config.json.")
        void file(Path f) {
            file = f;
        }
    }

    /** The deprecated spelling {@code nvmfctl import --nvmetcli FILE}: the same, with a warning. */
    @Command(name = "import", hidden = true, description = {"Deprecated: use 'nvmfctl import-nvmetcli FILE' "
        + "(and 'nvmfctl config import FILE' for an nvmf4j document)."})
    static final class Legacy extends NvmetcliImport {
        @Option(names = "--nvmetcli", required = true, paramLabel = "FILE", description = "nvmetcli's config.json.")
        void nvmetcli(Path f) {
            file = f;
        }

        @Override
        public Integer call() {
            warn("'nvmfctl import --nvmetcli FILE' is deprecated: use 'nvmfctl import-nvmetcli FILE' (and "
                + "'nvmfctl config import FILE' for an nvmf4j document)");
            return super.call();
        }
    }

    @Override
    public Integer call() {
        if (blockSize != 512 && blockSize != 4096) {
            throw CliException.usage("--block-size must be 512 or 4096, got " + blockSize);
        }
        JsonNode nvmetcli;
        try {
            nvmetcli = mapper().readTree(file.toFile());
        } catch (IOException e) {
            throw CliException.usage("cannot read " + file + ": " + e.getMessage().lines().findFirst().orElse(""));
        }
        NvmetcliConverter.Result r = NvmetcliConverter.convert(nvmetcli, blockSize, keyDir);
        r.warnings().forEach(this::warn);
        if (!apply) {
            out().print(ConfigStore.toJson(r.config()));
            out().flush();
            return 0;
        }
        ApiClient.Response live = applyDropping(merge(r.config()));
        if (json()) {
            printJson(live.json(mapper()));
        } else {
            say(ConfigCommands.applied(file, live.json(mapper()), live.restartRequired()));
        }
        return 0;
    }

    /** The live document with its storage (bdevs, subsystems, referrals) replaced by the converted one. */
    private TargetConfig merge(TargetConfig converted) {
        TargetConfig live;
        try {
            live = ConfigStore.parse(ConfigCommands.document(api().get(ConfigCommands.PATH)).toString());
        } catch (ConfigException e) {
            throw new CliException(CliException.UNAVAILABLE, "the service answered a document nvmfctl cannot read: "
                + e.getMessage());
        }
        live.bdevs = converted.bdevs;
        live.subsystems = converted.subsystems;
        live.referrals = converted.referrals;
        return live;
    }

    /** PUT; while the target refuses listeners by transport, drop those (with a warning) and try again. */
    private ApiClient.Response applyDropping(TargetConfig doc) {
        while (true) {
            ApiClient.Response r = api().exchange("PUT", ConfigCommands.PATH, ConfigStore.toJson(doc));
            if (r.status() == 200) {
                return r;
            }
            List<int[]> refused = r.status() == 400 ? refusedListeners(r, doc) : List.of();
            if (refused.isEmpty()) {
                throw api().failure(r);
            }
            for (int i = refused.size() - 1; i >= 0; i--) {
                SubsystemConfig s = doc.subsystems.get(refused.get(i)[0]);
                ListenerConfig l = s.listeners.remove(refused.get(i)[1]);
                warn("listener " + l + " of " + s.nqn + " not applied: the target refuses its transport; "
                    + "it stays in the converted document (nvmfctl import-nvmetcli without --apply)");
            }
        }
    }

    /** [subsystem, listener] indexes of non-tcp listeners the validator named, in document order. */
    private List<int[]> refusedListeners(ApiClient.Response r, TargetConfig doc) {
        JsonNode body = r.json(mapper());
        String error = body == null ? "" : body.path("error").asText("");
        List<int[]> found = new ArrayList<>();
        Matcher m = LISTENER_TRANSPORT.matcher(error);
        while (m.find()) {
            int s = Integer.parseInt(m.group(1));
            int l = Integer.parseInt(m.group(2));
            if (s < doc.subsystems.size() && l < doc.subsystems.get(s).listeners.size()
                && !"tcp".equals(doc.subsystems.get(s).listeners.get(l).transport)) {
                found.add(new int[] {s, l});
            }
        }
        found.sort((a, b) -> a[0] != b[0] ? Integer.compare(a[0], b[0]) : Integer.compare(a[1], b[1]));
        return found;
    }
}
