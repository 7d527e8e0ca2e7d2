package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.Arrays;

/**
 * {@code nvmfctl io}: I/O per host and per controller, the slowest recent I/Os and a namespace's latency
 * percentiles ({@code /api/v1/io/...}, java engine).
 */
@Command(name = "io", description = "I/O seen by the target (java engine): per host, per controller, the slowest "
    + "recent commands, a namespace's latency percentiles.",
    subcommands = {IoCommands.Hosts.class, IoCommands.Controllers.class, IoCommands.Slowest.class,
        IoCommands.Latency.class})
final class IoCommands extends Group {
    private static final String IO = "/api/v1/io";

    /** The columns of an {@code io} object, after those that name its host or controller. */
    private static final String[] IO_COLUMNS = {"READS", "WRITES", "OTHER", "READ", "WRITTEN", "ERRORS", "R-MEAN-US",
        "W-MEAN-US"};

    private static String micros(JsonNode n) {
        return String.format("%.1f", n.asDouble());
    }

    /** A table of {@code first} columns and then the {@code io} columns. */
    private static Table ioTable(String... first) {
        String[] all = Arrays.copyOf(first, first.length + IO_COLUMNS.length);
        System.arraycopy(IO_COLUMNS, 0, all, first.length, IO_COLUMNS.length);
        return new Table(all);
    }

    /** A row of {@code first} cells and then those of the {@code io} object. */
    private static void ioRow(Table t, JsonNode io, Object... first) {
        Object[] all = Arrays.copyOf(first, first.length + IO_COLUMNS.length);
        Object[] cells = {io.get("reads"), io.get("writes"), io.get("others"), Table.size(io.get("bytesRead").asLong()),
            Table.size(io.get("bytesWritten").asLong()), io.get("errors"), micros(io.get("meanReadMicros")),
            micros(io.get("meanWriteMicros"))};
        System.arraycopy(cells, 0, all, first.length, cells.length);
        t.row(all);
    }

    @Command(name = "hosts", description = "Commands, bytes and mean latency per host NQN, over its controllers.")
    static final class Hosts extends ApiCommand {
        @Override
        public Integer call() {
            JsonNode hosts = api().get(IO + "/hosts");
            if (json()) {
                printJson(hosts);
                return 0;
            }
            Table t = ioTable("HOST", "CTRLS");
            hosts.forEach(h -> ioRow(t, h.get("io"), h.get("host"), h.get("controllers")));
            t.print(out());
            return 0;
        }
    }

    @Command(name = "controllers", description = "Commands, bytes and mean latency per live controller.")
    static final class Controllers extends ApiCommand {
        @Option(names = "--subsystem", paramLabel = "NQN", description = "Only this subsystem's controllers.")
        String subsystem;

        @Option(names = "--host", paramLabel = "NQN", description = "Only this host's controllers.")
        String host;

        @Override
        public Integer call() {
            StringBuilder q = new StringBuilder();
            if (subsystem != null) {
                q.append("subsystem=").append(ApiClient.seg(subsystem));
            }
            if (host != null) {
                q.append(q.length() > 0 ? "&" : "").append("host=").append(ApiClient.seg(host));
            }
            JsonNode list = api().get(IO + "/controllers" + (q.length() > 0 ? "?" + q : ""));
            if (json()) {
                printJson(list);
                return 0;
            }
            Table t = ioTable("SUBSYSTEM", "CNTLID", "HOST");
            list.forEach(c -> ioRow(t, c.get("io"), c.get("subsystem"), c.get("cntlid"), c.get("host")));
            t.print(out());
            return 0;
        }
    }

    @Command(name = "slowest", description = "The slowest I/O commands of the last one to two minutes, slowest first.")
    static final class Slowest extends ApiCommand {
        @Option(names = "--limit", paramLabel = "N", description = "At most N commands (1..64, default 64).")
        Integer limit;

        @Override
        public Integer call() {
            JsonNode list = api().get(IO + "/slowest" + (limit == null ? "" : "?limit=" + limit));
            if (json()) {
                printJson(list);
                return 0;
            }
            Table t = new Table("TIME", "LATENCY-US", "OP", "SUBSYSTEM", "NSID", "HOST", "CNTLID", "QID", "LBA",
                "BLOCKS", "STATUS");
            list.forEach(s -> t.row(s.get("time"), micros(s.get("latencyMicros")), s.get("op"), s.get("subsystem"),
                s.get("nsid"), s.get("host"), s.get("cntlid"), s.get("qid"), s.get("lba"), s.get("blocks"),
                s.get("status")));
            t.print(out());
            return 0;
        }
    }

    @Command(name = "latency", description = "Latency percentiles (p50, p90, p99, p99.9) of a namespace's reads and "
        + "writes since the service started (spdk engine: op all, every command since the namespace was added).")
    static final class Latency extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Option(names = "--nsid", required = true, paramLabel = "N", description = "The namespace ID.")
        int nsid;

        @Override
        public Integer call() {
            JsonNode list = api().get(NamespaceCommands.path(subsystem.nqn) + "/" + nsid + "/latency");
            if (json()) {
                printJson(list);
                return 0;
            }
            Table t = new Table("OP", "COUNT", "P50-US", "P90-US", "P99-US", "P99.9-US", "MAX-US");
            list.forEach(l -> t.row(l.get("op"), l.get("count"), micros(l.get("p50Micros")), micros(l.get("p90Micros")),
                micros(l.get("p99Micros")), micros(l.get("p999Micros")), micros(l.get("maxMicros"))));
            t.print(out());
            return 0;
        }
    }
}
