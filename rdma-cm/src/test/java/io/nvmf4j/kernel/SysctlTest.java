package io.nvmf4j.kernel;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SysctlTest {
    /** What cat(1) prints for the file, stripped: one read(2) of a whole buffer at offset 0. */
    private static String cat(String path) throws Exception {
        Process p = new ProcessBuilder("cat", path).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out.strip();
    }

    @Test
    void readsANumericKernelSettingWhole() throws Exception {
        // a numeric handler of more than one digit: Files.readString returns its first digit alone
        Path pidMax = Path.of("/proc/sys/kernel/pid_max");
        long expected = Long.parseLong(cat(pidMax.toString()));
        assertThat(expected).as("pid_max has several digits here, so a one-byte read would show").isGreaterThan(9);
        assertThat(Sysctl.readLong(pidMax)).isEqualTo(expected);
    }

    @Test
    void readsASettingOfTwoNumbersWhole() throws Exception {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        String expected = cat(range.toString());
        assertThat(expected.split("\\s+")).hasSize(2);
        assertThat(Sysctl.read(range)).isEqualTo(expected);
    }

    @Test
    void readsARegularFileStandingForTheSetting(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("nr_hugepages");
        Files.writeString(f, "320\n");
        assertThat(Sysctl.readLong(f)).isEqualTo(320);
    }

    @Test
    void aSettingThatIsNoNumberIsAnErrorNamingTheFile(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("nr_hugepages");
        Files.writeString(f, "many\n");
        assertThatThrownBy(() -> Sysctl.readLong(f)).isInstanceOf(IOException.class)
            .hasMessageContaining(f.toString()).hasMessageContaining("'many'");
    }
}
