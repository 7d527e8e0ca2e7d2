package io.nvmf4j.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The document file and its journal: what {@link ConfigStore#load} reads back after each kind of change, after a
 * crash that tore the last record, and after a crash between the two writes of a compaction.
 */
class ConfigJournalTest {
    @TempDir
    Path dir;

    private static TargetConfig base() {
        TargetConfig c = ConfigStore.defaultConfig();
        ConfigStore.assignIdentities(c);
        return c;
    }

    private static SubsystemConfig subsystem(String nqn, String bdev) {
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = nqn;
        s.namespaces.add(new NamespaceConfig(1, bdev));
        ConfigStore.assignIdentities(s);
        return s;
    }

    /** Documents as the control layer makes them: each shares the items it did not change with the one before. */
    private static List<TargetConfig> changes(TargetConfig c0) {
        List<TargetConfig> docs = new ArrayList<>();
        TargetConfig c = c0;
        for (int i = 0; i < 5; i++) {
            c = ConfigStore.shallowCopy(c);
            c.bdevs.add(new BdevConfig("null" + i, "null", 512, 2048));
            docs.add(c);
            c = ConfigStore.shallowCopy(c);
            c.subsystems.add(subsystem("nqn.2026-12.io.nvmf4j.j:s" + i, "null" + i));
            docs.add(c);
        }
        c = ConfigStore.shallowCopy(c); // a subsystem changed in place (a copy of it replaces it)
        SubsystemConfig changed = ConfigStore.parse(ConfigStore.toJson(c)).subsystems.get(2);
        changed.hosts.add("nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-000000000001");
        c.subsystems.set(2, changed);
        docs.add(c);
        c = ConfigStore.shallowCopy(c); // removals in the middle of the lists
        c.subsystems.remove(3);
        c.bdevs.remove(3);
        docs.add(c);
        c = ConfigStore.shallowCopy(c); // a field outside the lists
        c.referrals.add(new ReferralConfig("tcp", "192.0.2.1", 4420));
        c.cores = 3;
        docs.add(c);
        return docs;
    }

    /** Writes the base document to {@code file}, then journals {@link #changes}; returns the documents saved. */
    private static List<TargetConfig> journaled(Path file) throws IOException {
        ConfigStore.save(file, base());
        ConfigJournal j = ConfigJournal.open(file, ConfigStore.load(file));
        List<TargetConfig> docs = changes(ConfigStore.load(file));
        for (TargetConfig d : docs) {
            j.save(file, d);
        }
        return docs;
    }

    private static String json(TargetConfig c) {
        return ConfigStore.toJson(c);
    }

    @Test
    void replayingTheJournalGivesTheDocumentOfEveryChange() throws IOException {
        Path file = dir.resolve("config.json");
        TargetConfig c0 = base();
        ConfigStore.save(file, c0);
        ConfigJournal j = ConfigJournal.open(file, ConfigStore.load(file));
        TargetConfig start = ConfigStore.load(file);
        byte[] docBytes = Files.readAllBytes(file);
        List<TargetConfig> docs = changes(start);
        for (TargetConfig d : docs) {
            j.save(file, d);
            assertThat(json(ConfigStore.load(file))).isEqualTo(json(d));
        }
        assertThat(j.compactions()).as("every change was journaled, none compacted").isZero();
        assertThat(Files.readAllBytes(file)).as("the document file was not rewritten").isEqualTo(docBytes);
        assertThat(Files.readAllLines(ConfigJournal.journalOf(file))).hasSize(docs.size() + 1);
    }

    @Test
    void aTornLastRecordIsDroppedAndEveryOtherChangeKept() throws IOException {
        Path file = dir.resolve("config.json");
        List<TargetConfig> docs = journaled(file);
        Path journal = ConfigJournal.journalOf(file);
        long size = Files.size(journal);
        for (long cut : new long[] {1, 7, 40}) { // the newline only; into the record; into the CRC's line
            try (FileChannel ch = FileChannel.open(journal, StandardOpenOption.WRITE)) {
                ch.truncate(size - cut);
            }
            assertThat(json(ConfigStore.load(file))).as("cut %d bytes", cut)
                .isEqualTo(json(docs.get(docs.size() - 2)));
        }
    }

    @Test
    void aDamagedRecordWithRecordsAfterItIsAnError() throws IOException {
        Path file = dir.resolve("config.json");
        journaled(file);
        Path journal = ConfigJournal.journalOf(file);
        List<String> lines = Files.readAllLines(journal);
        lines.set(3, lines.get(3).replace("null", "nulL"));
        Files.write(journal, lines, StandardCharsets.UTF_8);
        assertThatThrownBy(() -> ConfigStore.load(file)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("record 3 is damaged and records follow it");
    }

    @Test
    void aKillBetweenTheWritesOfACompactionKeepsEveryChange() throws IOException {
        Path file = dir.resolve("config.json");
        List<TargetConfig> docs = journaled(file);
        TargetConfig last = docs.get(docs.size() - 1);
        // killed after its journal record, before any compaction: the record is replayed
        assertThat(json(ConfigStore.load(file))).isEqualTo(json(last));
        // killed after the compaction wrote the document, before it replaced the journal: the journal names the
        // document before, so its changes (all in the new document) are not applied twice
        ConfigStore.writeAtomically(file, json(last).getBytes(StandardCharsets.UTF_8));
        assertThat(json(ConfigStore.load(file))).isEqualTo(json(last));
        // the next start compacts: a fresh journal naming the document
        ConfigJournal.open(file, ConfigStore.load(file));
        assertThat(Files.readAllLines(ConfigJournal.journalOf(file))).hasSize(1);
        assertThat(json(ConfigStore.load(file))).isEqualTo(json(last));
    }

    @Test
    void aChangeOfManyItemsOrABigJournalCompacts() throws IOException {
        Path file = dir.resolve("config.json");
        ConfigStore.save(file, base());
        ConfigJournal j = ConfigJournal.open(file, ConfigStore.load(file));
        TargetConfig c = ConfigStore.load(file);
        for (int i = 0; i < 100; i++) {
            c.bdevs.add(new BdevConfig("many" + i, "null", 512, 2048));
        }
        TargetConfig many = ConfigStore.parse(json(c)); // every item new, as an import makes it
        j.save(file, many);
        assertThat(j.compactions()).isEqualTo(1);
        assertThat(Files.readString(file)).isEqualTo(json(many));
        assertThat(Files.readAllLines(ConfigJournal.journalOf(file))).hasSize(1);
        TargetConfig d = many;
        for (int i = 0; i < 3000 && j.compactions() < 2; i++) {
            d = ConfigStore.shallowCopy(d);
            d.bdevs.add(new BdevConfig("more" + i, "null", 512, 2048));
            j.save(file, d);
        }
        assertThat(j.compactions()).as("the journal outgrew its bound").isEqualTo(2);
        assertThat(json(ConfigStore.load(file))).isEqualTo(json(d));
    }

    @Test
    void aDocumentWithoutAJournalIsReadAndKeptAsItWas() throws IOException {
        Path file = dir.resolve("config.json");
        String text = json(base()).replace("\n  ", "\n\t"); // an operator's own layout
        Files.writeString(file, text);
        Object inode = Files.readAttributes(file, "unix:ino").get("ino");
        TargetConfig loaded = ConfigStore.load(file);
        assertThat(json(loaded)).isEqualTo(json(ConfigStore.parse(text)));
        ConfigJournal j = ConfigJournal.open(file, loaded);
        assertThat(Files.readString(file)).isEqualTo(text);
        assertThat(Files.readAttributes(file, "unix:ino").get("ino")).as("not rewritten").isEqualTo(inode);
        TargetConfig next = ConfigStore.shallowCopy(loaded);
        next.bdevs.add(new BdevConfig("null0", "null", 512, 2048));
        j.save(file, next);
        assertThat(Files.readString(file)).isEqualTo(text);
        assertThat(json(ConfigStore.load(file))).isEqualTo(json(next));
    }
}
