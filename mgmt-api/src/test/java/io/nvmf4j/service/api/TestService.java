package io.nvmf4j.service.api;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.testhost.CephCluster;
import io.nvmf4j.service.Service;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.function.Consumer;

/** The service in-process on a temporary state directory, free ports picked at runtime. */
public final class TestService implements AutoCloseable {
    public static final String NQN = "nqn.2026-11.io.nvmf4j:rest-test";
    public static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000aa";

    public final Service service;
    public final Path dir;
    public final Path file;
    public final Http http;
    public final int nvmePort;

    private TestService(Service service, Path dir, Path file, int nvmePort) {
        this.service = service;
        this.dir = dir;
        this.file = file;
        this.nvmePort = nvmePort;
        this.http = new Http(service.apiPort(), service.apiToken().value());
    }

    /** One subsystem (any host) with namespace 1 on malloc bdev m0, listening on a free port. */
    public static TargetConfig baseConfig() {
        TargetConfig c = new TargetConfig();
        c.cores = 1;
        c.bdevs.add(new BdevConfig("m0", "malloc", 512, 2048));
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = NQN;
        s.allowAnyHost = true;
        s.maxNamespaces = 128;
        s.namespaces.add(new NamespaceConfig(1, "m0"));
        s.listeners.add(new ListenerConfig("tcp", "127.0.0.1", FreePorts.pick()));
        c.subsystems.add(s);
        c.api.port = FreePorts.pick();
        return c;
    }

    /** Lets rbd bdevs use the test Ceph cluster's config and keyring (under {@code CephCluster.dir()}). */
    public static void allowTestCeph(TargetConfig c) {
        c.storage = new StorageConfig();
        c.storage.cephDirectories = new ArrayList<>(List.of(CephCluster.get().dir().toString()));
    }

    public static TestService start(Path dir, Consumer<TargetConfig> customize) throws IOException {
        TargetConfig c = baseConfig();
        customize.accept(c);
        Path file = dir.resolve("config.json");
        ConfigStore.save(file, c);
        return restart(dir);
    }

    /** Starts from whatever config.json in {@code dir} holds. */
    public static TestService restart(Path dir) throws IOException {
        Path file = dir.resolve("config.json");
        Service s = Service.start(dir, file);
        return new TestService(s, dir, file, s.target().configSnapshot().subsystems.isEmpty() ? -1
            : s.target().listeners().values().iterator().next().getPort());
    }


    /** The file on disk, as JSON text of the parsed document. */
    public String fileJson() {
        try {
            return ConfigStore.toJson(ConfigStore.load(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** What {@link #blockSaves} returns: closing it lets the document be saved again. */
    public interface BlockedSaves extends AutoCloseable {
        @Override
        void close() throws IOException;
    }

    /**
     * Makes every save of the document fail until closed: a directory where the save's temporary file goes, and one
     * in the place of the journal a change is appended to.
     */
    public BlockedSaves blockSaves() throws IOException {
        Path blocker = java.nio.file.Files.createDirectories(file.resolveSibling("." + file.getFileName() + ".tmp"));
        java.nio.file.Files.writeString(blocker.resolve("keep"), "x");
        Path journal = io.nvmf4j.config.ConfigJournal.journalOf(file);
        Path aside = java.nio.file.Files.move(journal, journal.resolveSibling("journal.aside"));
        java.nio.file.Files.createDirectory(journal);
        return () -> {
            java.nio.file.Files.delete(journal);
            java.nio.file.Files.move(aside, journal);
            java.nio.file.Files.delete(blocker.resolve("keep"));
            java.nio.file.Files.delete(blocker);
        };
    }

    public String liveJson() {
        return ConfigStore.toJson(service.target().configSnapshot());
    }

    @Override
    public void close() {
        service.close();
    }
}
