package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A snapshot of a volume: a read-only reflink copy of its file as it was at one instant ({@link VolumeConfig}), with
 * the volume's size then. Clones are made from it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class SnapshotConfig {
    public String name;
    /** The volume's size in blocks when the snapshot was taken. */
    public long numBlocks;
    /** When it was taken (ISO-8601, UTC). */
    public String created;
    /** The group snapshot it was taken in (one name for all its volumes), absent for a snapshot of one volume. */
    public String group;

    public SnapshotConfig() {
    }

    public SnapshotConfig(String name, long numBlocks, String created, String group) {
        this.name = name;
        this.numBlocks = numBlocks;
        this.created = created;
        this.group = group;
    }
}
