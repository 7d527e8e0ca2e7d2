package io.nvmf4j.service.state;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigJournal;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.service.api.TestService;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What one control call costs as the document grows, counted rather than timed: the bytes written to keep the
 * document durable and the items the control layer looks at to check and index the change. Adding a namespace to a
 * document of 1,000 costs what it costs in one of 100.
 */
class ChangeCostTest {
    private static final int PER_SUBSYSTEM = 10;
    private static final int WINDOW = 20;

    @TempDir
    Path dir;
    private ConfigController<?> target;
    private ConfigService service;
    private int added;

    @AfterEach
    void close() {
        if (service != null) {
            service.close();
        }
        if (target != null) {
            target.close();
        }
    }

    private Path start() throws Exception {
        TargetConfig c = TestService.baseConfig();
        Path file = dir.resolve("config.json");
        ConfigStore.save(file, c);
        target = Engines.start(ConfigStore.load(file), IoObserver.NONE);
        service = new ConfigService(target, file);
        return file;
    }

    /** Adds namespaces (a bdev and a namespace each, a new subsystem every ten) until the document has {@code n}. */
    private void growTo(int n, int port) {
        while (added < n) {
            String nqn = "nqn.2026-12.io.nvmf4j.cost:s" + added / PER_SUBSYSTEM;
            if (added % PER_SUBSYSTEM == 0) {
                SubsystemConfig s = new SubsystemConfig();
                s.nqn = nqn;
                s.allowAnyHost = true;
                s.listeners.add(new ListenerConfig("tcp", "127.0.0.1", port));
                service.addSubsystem(s).join();
            }
            service.addBdev(new BdevConfig("null" + added, "null", 512, 2048)).join();
            service.addNamespace(nqn, new NamespaceConfig(0, "null" + added)).join();
            added++;
        }
    }

    /**
     * Bytes each add writes, over {@link #WINDOW} adds: what the journal grew by, plus the whole document when the
     * document file was replaced (another inode or modification time: the atomic write renames a new file over it).
     */
    private List<Long> bytesPerAdd(Path file, int port) throws Exception {
        Path journal = ConfigJournal.journalOf(file);
        List<Long> out = new ArrayList<>();
        for (int i = 0; i < WINDOW; i++) {
            Object written = Files.readAttributes(file, "unix:ino,lastModifiedTime");
            long journalBefore = Files.exists(journal) ? Files.size(journal) : 0;
            growTo(added + 1, port);
            long journalAfter = Files.exists(journal) ? Files.size(journal) : 0;
            boolean rewritten = !written.equals(Files.readAttributes(file, "unix:ino,lastModifiedTime"));
            out.add(Math.max(0, journalAfter - journalBefore) + (rewritten ? Files.size(file) : 0));
        }
        return out;
    }

    private static long median(List<Long> xs) {
        List<Long> s = new ArrayList<>(xs);
        Collections.sort(s);
        return s.get(s.size() / 2);
    }

    @Test
    void anAddWritesBytesThatDoNotGrowWithTheDocument() throws Exception {
        Path file = start();
        int port = target.config().subsystems.get(0).listeners.get(0).port;
        growTo(100, port);
        long at100 = median(bytesPerAdd(file, port));
        growTo(1000, port);
        long at1000 = median(bytesPerAdd(file, port));
        assertThat(at1000).as("bytes written per add (median of %d) at 1,000 namespaces vs at 100 (%d bytes); the "
            + "document is %d bytes", WINDOW, at100, Files.size(file)).isLessThanOrEqualTo(2 * at100);
    }

    @Test
    void anAddLooksAtTheSameNumberOfItemsWhateverTheDocumentHolds() throws Exception {
        start();
        int port = target.config().subsystems.get(0).listeners.get(0).port;
        growTo(100, port);
        long before = target.documentWork();
        growTo(100 + WINDOW, port);
        long at100 = target.documentWork() - before;
        growTo(1000, port);
        before = target.documentWork();
        growTo(1000 + WINDOW, port);
        long at1000 = target.documentWork() - before;
        assertThat(at100).as("items looked at by %d adds at 100 namespaces", WINDOW).isPositive()
            .isLessThanOrEqualTo(WINDOW * 4L * PER_SUBSYSTEM);
        assertThat(at1000).as("items looked at by %d adds at 1,000 namespaces (at 100: %d)", WINDOW, at100)
            .isEqualTo(at100);
    }

    @Test
    void aRefusedChangeLeavesNoRecordAndNothingChanged() throws Exception {
        Path file = start();
        int port = target.config().subsystems.get(0).listeners.get(0).port;
        growTo(30, port);
        Path journal = ConfigJournal.journalOf(file);
        String nqn = "nqn.2026-12.io.nvmf4j.cost:s0";
        // cross-document rules, checked through the index: a bdev that backs a namespace elsewhere, an NGUID another
        // subsystem's namespace has, a subsystem NQN taken, a bdev name taken, a bdev that does not exist
        NamespaceConfig sameNguid = new NamespaceConfig(0, "spare");
        sameNguid.nguid = target.config().subsystems.get(2).namespaces.get(0).nguid;
        service.addBdev(new BdevConfig("spare", "null", 512, 2048)).join();
        byte[] journalBefore = Files.readAllBytes(journal);
        byte[] fileBefore = Files.readAllBytes(file);
        String docBefore = ConfigStore.toJson(target.config());
        SubsystemConfig taken = new SubsystemConfig();
        taken.nqn = "nqn.2026-12.io.nvmf4j.cost:s1";
        SubsystemConfig otherChannel = new SubsystemConfig();
        otherChannel.nqn = "nqn.2026-12.io.nvmf4j.cost:tls";
        ListenerConfig tls = new ListenerConfig("tcp", "127.0.0.1", port);
        tls.secureChannel = ListenerConfig.SECURE_REQUIRED;
        otherChannel.listeners.add(tls);
        List<Supplier<Object>> refused = List.of(
            () -> service.addNamespace(nqn, new NamespaceConfig(0, "null15")).join(),
            () -> service.addNamespace(nqn, sameNguid).join(),
            () -> service.addNamespace(nqn, new NamespaceConfig(0, "nothing")).join(),
            () -> service.addSubsystem(taken).join(),
            () -> service.addSubsystem(otherChannel).join(),
            () -> service.addBdev(new BdevConfig("null3", "null", 512, 2048)).join(),
            () -> service.addBdev(new BdevConfig("-bad", "null", 512, 2048)).join());
        List<String> messages = new ArrayList<>();
        for (Supplier<Object> call : refused) {
            assertThatThrownBy(call::get).isInstanceOf(CompletionException.class)
                .satisfies(e -> messages.add(e.getCause().getMessage()));
            assertThat(ConfigStore.toJson(target.config())).as("the document after a refusal").isEqualTo(docBefore);
            assertThat(Files.readAllBytes(journal)).as("the journal after a refusal").isEqualTo(journalBefore);
            assertThat(Files.readAllBytes(file)).as("the document file after a refusal").isEqualTo(fileBefore);
        }
        assertThat(messages.get(0)).contains("bdev null15 already backs namespace");
        assertThat(messages.get(1)).contains("nguid " + sameNguid.nguid + " is already used by namespace");
        assertThat(messages.get(2)).contains("no bdev named 'nothing'");
        assertThat(messages.get(3)).contains("already exists");
        assertThat(messages.get(4)).contains("secureChannel").contains("on the same listener");
        assertThat(messages.get(5)).contains("already exists");
        assertThat(messages.get(6)).contains("name");
        // and the store read back is the live document
        assertThat(ConfigStore.toJson(ConfigStore.load(file))).isEqualTo(docBefore);
    }
}
