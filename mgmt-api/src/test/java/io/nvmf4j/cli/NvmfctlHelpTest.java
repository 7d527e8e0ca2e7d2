package io.nvmf4j.cli;

import io.nvmf4j.cli.Cli.Run;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The help of every command, found by walking the whole command tree (so a new command cannot forget
 * it): {@code CMD --help} and {@code nvmfctl help CMD} exit 0 with the same usage, and every
 * command, option and parameter has a description (they become the man page).
 */
class NvmfctlHelpTest {
    /** Every command path under nvmfctl, hidden ones included: [], [bdev], [bdev, list], ... */
    private static List<List<String>> paths() {
        List<List<String>> all = new ArrayList<>();
        walk(Nvmfctl.commandLine(Map.of()), new ArrayList<>(), all);
        return all;
    }

    private static void walk(CommandLine cl, List<String> path, List<List<String>> into) {
        into.add(List.copyOf(path));
        cl.getSubcommands().forEach((name, sub) -> {
            if (sub.getCommandName().equals(name)) {  // aliases lead to the same command
                path.add(name);
                walk(sub, path, into);
                path.remove(path.size() - 1);
            }
        });
    }

    private static String[] args(List<String> path, String... more) {
        List<String> a = new ArrayList<>(path);
        a.addAll(Arrays.asList(more));
        return a.toArray(String[]::new);
    }

    @Test
    void everyCommandAtEveryLevelHasHelpThatExitsZero() {
        List<List<String>> paths = paths();
        assertThat(paths).as("the walk found the tree").contains(List.of("listener", "add"), List.of("ls"),
            List.of("import-nvmetcli"), List.of("import"), List.of("config", "import"), List.of("help"));
        assertThat(paths).hasSizeGreaterThan(35);
        for (List<String> path : paths) {
            String name = String.join(" ", args(List.of("nvmfctl"), path.toArray(String[]::new)));
            Run help = Cli.runBare(Map.of(), args(path, "--help"));
            assertThat(help.code()).as("%s --help: %s", name, help).isZero();
            assertThat(help.err()).as("%s --help", name).isEmpty();
            assertThat(help.out()).as("%s --help", name).startsWith("Usage: " + name + " ");
            if (!path.isEmpty()) {
                Run viaHelp = Cli.runBare(Map.of(), args(List.of("help"), path.toArray(String[]::new)));
                assertThat(viaHelp.code()).as("nvmfctl help %s: %s", path, viaHelp).isZero();
                assertThat(viaHelp.out()).as("nvmfctl help %s", path).isEqualTo(help.out());
            }
        }
    }

    @Test
    void globalOptionsAreInEveryCommandsHelpUnderTheirOwnHeading() {
        for (List<String> path : paths()) {
            String out = Cli.runBare(Map.of(), args(path, "--help")).out();
            assertThat(out).as("%s", path).contains("\nGlobal options (anywhere on the line):\n")
                .contains("      --url=URL ").contains("      --json ").contains("      --token=TOKEN ")
                .contains("      --insecure ").contains("\nExit codes:\n");
            assertThat(out.indexOf("      --url=URL")).as("%s: global options after the command's", path)
                .isGreaterThan(out.indexOf("Global options"));
        }
    }

    @Test
    void everyCommandOptionAndParameterIsDescribed() {
        List<String> missing = new ArrayList<>();
        check(Nvmfctl.commandLine(Map.of()).getCommandSpec(), missing);
        assertThat(missing).as("without a description (the man page needs one)").isEmpty();
    }

    private static void check(CommandSpec spec, List<String> missing) {
        if (String.join("", spec.usageMessage().description()).isBlank()) {
            missing.add(spec.qualifiedName());
        }
        List<ArgSpec> args = new ArrayList<>(spec.options());
        args.addAll(spec.positionalParameters());
        for (ArgSpec a : args) {
            if (String.join("", a.description()).isBlank()) {
                missing.add(spec.qualifiedName() + " " + a);
            }
        }
        spec.subcommands().values().forEach(sub -> check(sub.getCommandSpec(), missing));
    }

    @Test
    void helpOfTwoLevelsAndVersion() {
        Run r = Cli.runBare(Map.of(), "help", "listener", "add");
        assertThat(r.code()).isZero();
        assertThat(r.out()).startsWith("Usage: nvmfctl listener add ").contains("-n, --nqn=NQN")
            .contains("-t, --transport=TRANSPORT").contains("-a, --traddr=ADDR").contains("-s, --trsvcid=PORT");
        assertThat(Cli.runBare(Map.of(), "help").out()).isEqualTo(Cli.runBare(Map.of(), "--help").out());
        assertThat(Cli.runBare(Map.of(), "listener", "add", "-h").out()).isEqualTo(r.out());
        Run v = Cli.runBare(Map.of(), "bdev", "list", "--version");
        assertThat(v.code()).isZero();
        assertThat(v.out()).isEqualTo("nvmfctl 0.1.0\n");
    }

    /** One argument style: the subsystem is -n/--nqn and the host -q/--hostnqn wherever they are taken. */
    @Test
    void oneArgumentStyleThroughout() {
        List<String> bad = new ArrayList<>();
        styles(Nvmfctl.commandLine(Map.of()).getCommandSpec(), bad);
        assertThat(bad).isEmpty();
    }

    private static void styles(CommandSpec spec, List<String> bad) {
        spec.options().forEach(o -> {
            List<String> names = Arrays.asList(o.names());
            if (names.contains("--nqn") && !names.contains("-n")
                || names.contains("--hostnqn") && !names.contains("-q")
                || names.contains("--traddr") && !names.contains("-a")
                || names.contains("--trsvcid") && !names.contains("-s")
                || names.contains("--transport") && !names.contains("-t")) {
                bad.add(spec.qualifiedName() + " " + names);
            }
        });
        spec.positionalParameters().forEach(p -> {
            if (p.paramLabel().contains("NQN")) {
                bad.add(spec.qualifiedName() + ": NQN as a positional parameter " + p.paramLabel());
            }
        });
        spec.subcommands().values().forEach(sub -> styles(sub.getCommandSpec(), bad));
    }
}
