package io.nvmf4j.dist;

import io.nvmf4j.cli.Nvmfctl;
import io.nvmf4j.service.Main;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.codegen.docgen.manpage.ManPageGenerator;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Build-time generator (run by this module's pom at package time): the man pages as AsciiDoc (picocli's
 * {@link ManPageGenerator}, one page per command and subcommand) and the bash completion scripts
 * ({@link AutoComplete}; zsh loads them through bashcompinit) for {@code nvmfctl} and
 * {@code nvmf4j-target}. It works on the command lines the launchers really run
 * ({@link Nvmfctl#commandLine(Map)}, {@code new CommandLine(new Main())}), so the pages and completions
 * follow the commands as they are.
 */
public final class GenerateDocs {
    private GenerateDocs() {
    }

    /** The commands of the distribution, by the name their launcher has. */
    static Map<String, CommandLine> commands() {
        return Map.of(
            "nvmfctl", Nvmfctl.commandLine(Map.of()),
            "nvmf4j-target", new CommandLine(new Main()));
    }

    /** {@code GenerateDocs MAN_ADOC_DIR COMPLETION_DIR} */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: GenerateDocs MAN_ADOC_DIR COMPLETION_DIR");
            System.exit(2);
        }
        Path man = Files.createDirectories(Path.of(args[0]));
        Path completion = Files.createDirectories(Path.of(args[1]));
        for (Map.Entry<String, CommandLine> e : commands().entrySet()) {
            CommandLine cl = e.getValue();
            int rc = ManPageGenerator.generateManPage(man.toFile(), null, new boolean[0], true, cl.getCommandSpec());
            if (rc != 0) {
                throw new IOException("ManPageGenerator failed for " + e.getKey() + " (exit " + rc + ")");
            }
            Files.writeString(completion.resolve(e.getKey()), AutoComplete.bash(e.getKey(), cl),
                StandardCharsets.UTF_8);
        }
        try (var pages = Files.list(man)) {
            List<String> names = pages.map(p -> p.getFileName().toString()).sorted().toList();
            System.out.println("GenerateDocs: " + names.size() + " man pages (AsciiDoc) in " + man + ", completion for "
                + commands().keySet() + " in " + completion);
        }
    }
}
