package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.config.Nqn;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code nvmfctl host}: hosts allowed on a subsystem ({@code /api/v1/subsystems/{nqn}/hosts}); with the discovery NQN
 * ({@code -n nqn.2014-08.org.nvmexpress.discovery}, as SPDK's {@code nvmf_subsystem_add_host} takes it) the hosts'
 * TLS PSKs for the discovery subsystem ({@code /api/v1/discovery/hosts}).
 */
@Command(name = "host", description = {"Hosts allowed on a subsystem: list, add, remove.",
    "With -n " + Nqn.DISCOVERY + ": hosts' TLS PSKs for the discovery subsystem (nvme discover --tls)."},
    subcommands = {HostCommands.List.class, HostCommands.Add.class, HostCommands.Remove.class})
final class HostCommands extends Group {
    static String path(String nqn) {
        return discovery(nqn) ? ApiClient.V1 + "/discovery/hosts" : ApiCommand.subsystemPath(nqn) + "/hosts";
    }

    /** The discovery subsystem: every host may discover; a host listed there has a TLS PSK for it. */
    static boolean discovery(String nqn) {
        return Nqn.DISCOVERY.equals(nqn);
    }

    /** The host: {@code -q/--hostnqn}, as nvme-cli spells it. */
    static final class HostNqn {
        @Option(names = {"-q", "--hostnqn"}, required = true, paramLabel = "HOSTNQN", description = "The host's NQN.")
        String hostnqn;
    }

    @Command(name = "list", description = "List the hosts allowed on a subsystem.")
    static final class List extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Override
        public Integer call() {
            JsonNode hosts = api().get(path(subsystem.nqn));
            if (json()) {
                printJson(hosts);
                return 0;
            }
            if (discovery(subsystem.nqn)) {
                Table t = new Table("HOSTNQN", "TLSKEY");
                hosts.forEach(h -> t.row(h.path("host"), h.path("tlsKey")));
                t.print(out());
                return 0;
            }
            Table t = new Table("HOSTNQN");
            hosts.forEach(h -> t.row(h));
            t.print(out());
            return 0;
        }
    }

    @Command(name = "add", description = {"Allow a host on a subsystem; with --dhchap-key it must authenticate "
        + "(DH-HMAC-CHAP); with --tls-key its NVMe/TCP TLS PSK for listeners with a secure channel.",
        "Example: nvmfctl host add -n nqn.2026-11.io.nvmf4j:default -q nqn.2014-08.org.nvmexpress:uuid:...",
        "         nvmfctl host add -n ... -q ... --dhchap-key /var/lib/nvmf4j/keys/host1.key",
        "         nvmfctl host add -n ... -q ... --tls-key /var/lib/nvmf4j/keys/host1.psk",
        "With -n " + Nqn.DISCOVERY + " and --tls-key: the host's PSK for nvme discover --tls (no DH-HMAC-CHAP)."})
    static final class Add extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Mixin
        HostNqn host;

        @Option(names = "--dhchap-key", paramLabel = "FILE", description = "File with the host's DHHC-1 key (as "
            + "nvme gen-dhchap-key writes it), mode 0600, readable by the service; the host must authenticate.")
        String dhchapKey;

        @Option(names = "--dhchap-ctrl-key", paramLabel = "FILE", description = "File with the controller's DHHC-1 "
            + "key, mode 0600: the target proves itself to a host that asks (bidirectional authentication).")
        String dhchapCtrlKey;

        @Option(names = "--tls-key", paramLabel = "FILE", description = "File with the host's NVMe/TCP TLS PSK in the "
            + "interchange format (NVMeTLSkey-1:01:...: as nvme gen-tls-key writes it), mode 0600.")
        String tlsKey;

        @Option(names = "--tls-key-derivation", paramLabel = "libnvme|rfc8446", description = "How the host derives "
            + "its TLS PSK: libnvme (default: nvme-cli up to 2.15, e.g. Debian 13) or rfc8446 (SPDK, nvme-cli 2.16+).")
        String tlsKeyDerivation;

        @Override
        public Integer call() {
            if (dhchapCtrlKey != null && dhchapKey == null) {
                throw new CliException(2, "--dhchap-ctrl-key needs --dhchap-key (the controller authenticates to a "
                    + "host that authenticated)");
            }
            boolean discovery = discovery(subsystem.nqn);
            if (discovery) {
                requireTlsKeyOnly();
            }
            var body = object().put("nqn", host.hostnqn);
            if (dhchapKey != null) {
                body.put("dhchapKey", absolute(dhchapKey));
            }
            if (dhchapCtrlKey != null) {
                body.put("dhchapCtrlKey", absolute(dhchapCtrlKey));
            }
            if (tlsKey != null) {
                body.put("tlsKey", absolute(tlsKey));
            }
            if (tlsKeyDerivation != null) {
                body.put("tlsKeyDerivation", tlsKeyDerivation);
            }
            JsonNode added = api().post(path(subsystem.nqn), body);
            if (json()) {
                printJson(added);
            } else {
                say(discovery ? "host " + host.hostnqn + " has a TLS PSK for the discovery subsystem"
                    : "allowed host " + host.hostnqn + " on " + subsystem.nqn
                    + (dhchapKey == null ? "" : dhchapCtrlKey == null ? " (DH-HMAC-CHAP)"
                    : " (DH-HMAC-CHAP, bidirectional)") + (tlsKey == null ? "" : " (TLS PSK)"));
            }
            return 0;
        }

        /** The discovery subsystem takes a TLS PSK and no DH-HMAC-CHAP keys. */
        private void requireTlsKeyOnly() {
            if (dhchapKey != null || dhchapCtrlKey != null) {
                throw new CliException(2, "--dhchap-key, --dhchap-ctrl-key: the discovery subsystem takes a TLS PSK "
                    + "only (--tls-key)");
            }
            if (tlsKey == null) {
                throw new CliException(2, "the discovery subsystem needs --tls-key (every host may discover; a key "
                    + "is for discovering over TLS)");
            }
        }

        /** The service reads the file: a relative name is taken from here (the CLI's directory). */
        private static String absolute(String file) {
            return java.nio.file.Path.of(file).toAbsolutePath().normalize().toString();
        }
    }

    @Command(name = "remove", description = "Disallow a host (its controllers are disconnected).")
    static final class Remove extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Mixin
        HostNqn host;

        @Override
        public Integer call() {
            api().delete(path(subsystem.nqn) + "/" + ApiClient.seg(host.hostnqn));
            String said = discovery(subsystem.nqn) ? "removed the TLS PSK of host " + host.hostnqn + " for the "
                + "discovery subsystem" : "removed host " + host.hostnqn + " from " + subsystem.nqn;
            done(said, "removed", object().put("subsystem", subsystem.nqn).put("host", host.hostnqn));
            return 0;
        }
    }
}
