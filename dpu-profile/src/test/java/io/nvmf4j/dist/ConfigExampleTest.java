package io.nvmf4j.dist;

import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.TargetConfig;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/** What the packages ship besides the jars: the config example and the generators' inputs. */
class ConfigExampleTest {
    private static final Path EXAMPLE = Path.of("src/conf/nvmf4j.json");

    @Test
    void exampleIsPlainJsonThatTheServiceAccepts(@org.junit.jupiter.api.io.TempDir Path stateDir) throws Exception {
        // the service's own strict reader (unknown fields, trailing tokens, comments are errors) and validator; the
        // storage rules want the image's directory to exist, so the package's state directory is this test's
        String text = Files.readString(EXAMPLE);
        assertThat(text).contains("\"fileDirectories\": [\"/var/lib/nvmf4j/images\"]");
        Files.createDirectory(stateDir.resolve("images")); // as the service makes it at its start
        TargetConfig c = ConfigStore.parse(text.replace("/var/lib/nvmf4j", stateDir.toString()));
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
        assertThat(c.subsystems).extracting(s -> s.nqn).containsExactly("nqn.2026-11.io.nvmf4j:example");
        assertThat(c.bdevs).extracting(b -> b.name).containsExactly("malloc0", "file0");
        assertThat(c.subsystems.get(0).namespaces).hasSize(2);
    }

    @Test
    void exampleWithACommentIsRefused() throws Exception {
        // docs/configuration.md's annotated example is for reading; the shipped one must stay comment-free
        String commented = Files.readString(EXAMPLE).replaceFirst("\\{", "{ // a comment");
        assertThatCode(() -> ConfigStore.parse(commented)).hasMessageContaining("comments are not allowed")
            .hasMessageContaining("line 1");
    }

    @Test
    void generatorsSeeBothCommandsWithTheirLauncherNames() {
        Map<String, CommandLine> commands = GenerateDocs.commands();
        assertThat(commands).containsOnlyKeys("nvmfctl", "nvmf4j-target");
        assertThat(commands.get("nvmfctl").getCommandName()).isEqualTo("nvmfctl");
        assertThat(commands.get("nvmf4j-target").getCommandName()).isEqualTo("nvmf4j-target");
        assertThat(commands.get("nvmfctl").getSubcommands()).containsKey("subsystem");
    }

    @Test
    void generatedPagesAndCompletionCoverEverySubcommand(@org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
        GenerateDocs.main(new String[] {tmp.resolve("man").toString(), tmp.resolve("completion").toString()});
        assertThat(tmp.resolve("man/nvmfctl.adoc")).content().contains(":doctype: manpage", "= nvmfctl(1)");
        assertThat(tmp.resolve("man/nvmf4j-target.adoc")).content().contains("--state-dir");
        CommandLine ctl = GenerateDocs.commands().get("nvmfctl");
        for (Map.Entry<String, CommandLine> sub : ctl.getSubcommands().entrySet()) {
            // hidden commands (deprecated aliases such as 'import') get no page of their own
            Path page = tmp.resolve("man/nvmfctl-" + sub.getKey() + ".adoc");
            if (sub.getValue().getCommandSpec().usageMessage().hidden()) {
                assertThat(page).as("page of hidden nvmfctl %s", sub.getKey()).doesNotExist();
            } else {
                assertThat(page).as("page of nvmfctl %s", sub.getKey()).exists();
            }
        }
        assertThat(tmp.resolve("completion/nvmfctl")).content().contains("complete -F", "subsystem");
        assertThat(tmp.resolve("completion/nvmf4j-target")).content().contains("--state-dir");
    }
}
