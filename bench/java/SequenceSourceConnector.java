package bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/**
 * bench/bench_scale.py's source connector on Apache Kafka Connect (--java): what connect_magics' SequenceSource does
 * there. Task {@code n} writes the schemaless value {@code {"task": n, "seq": i, "payload": ""}} (the key: {@code i}
 * as a string) at {@code rate} records a second, with source partition {@code {"task": n}} and offset
 * {@code {"seq": i}}; after a restart it resumes right after its committed offset, so it supports exactly-once
 * delivery (KIP-618). Configs: {@code topic}, {@code rate} (0: as fast as possible), {@code batch.size} (1000).
 *
 * <p>Compiled by the bench into a temporary plugin jar (javac --release 17 against the Kafka Connect jars).
 */
public class SequenceSourceConnector extends SourceConnector {
    static final String TOPIC = "topic";
    static final String RATE = "rate";
    static final String BATCH_SIZE = "batch.size";
    static final String TASK_ID = "task.id";

    static final ConfigDef CONFIG = new ConfigDef()
            .define(TOPIC, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(),
                    ConfigDef.Importance.HIGH, "The topic to write the records to")
            .define(RATE, ConfigDef.Type.DOUBLE, 0.0, ConfigDef.Range.atLeast(0), ConfigDef.Importance.MEDIUM,
                    "Records per second per task; 0 for as fast as possible")
            .define(BATCH_SIZE, ConfigDef.Type.INT, 1000, ConfigDef.Range.atLeast(1), ConfigDef.Importance.LOW,
                    "The most records a task returns from one poll")
            .define(TASK_ID, ConfigDef.Type.INT, 0, ConfigDef.Range.atLeast(0), ConfigDef.Importance.LOW,
                    "The task's number (set by the connector)");

    private Map<String, String> props = Collections.emptyMap();

    @Override
    public String version() {
        return "1.0";
    }

    @Override
    public void start(Map<String, String> props) {
        new AbstractConfig(CONFIG, props);  // fails on a bad config
        this.props = new HashMap<>(props);
    }

    @Override
    public Class<? extends Task> taskClass() {
        return Sequence.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> configs = new ArrayList<>();
        for (int i = 0; i < maxTasks; i++) {
            Map<String, String> config = new HashMap<>(props);
            config.put(TASK_ID, Integer.toString(i));
            configs.add(config);
        }
        return configs;
    }

    @Override
    public void stop() {
    }

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    @Override
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
        return ExactlyOnceSupport.SUPPORTED;
    }

    /** One task: counts on from its committed offset, {@code rate} records a second. */
    public static class Sequence extends SourceTask {
        /** The longest poll() waits for the next record before returning null. */
        static final long MAX_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);
        /** With a rate, how far behind schedule a task may catch up in bursts (the rest is dropped). */
        static final long MAX_BACKLOG_NANOS = TimeUnit.SECONDS.toNanos(1);

        private final CountDownLatch stopping = new CountDownLatch(1);
        private int taskId;
        private String topic;
        private double rate;
        private int batchSize;
        private long nextSeq;
        private long due;  // System.nanoTime() at which the next record is due (with a rate)
        private boolean scheduled;

        @Override
        public String version() {
            return "1.0";
        }

        @Override
        public void start(Map<String, String> props) {
            AbstractConfig config = new AbstractConfig(CONFIG, props);
            taskId = config.getInt(TASK_ID);
            topic = config.getString(TOPIC);
            rate = config.getDouble(RATE);
            batchSize = config.getInt(BATCH_SIZE);
            scheduled = false;
            Map<String, Object> offset = context.offsetStorageReader().offset(partition());
            Object seq = offset == null ? null : offset.get("seq");
            if (seq != null && !(seq instanceof Number)) {
                throw new ConnectException("Offset 'seq' is the incorrect type: " + seq);
            }
            nextSeq = seq == null ? 0 : ((Number) seq).longValue() + 1;
        }

        private Map<String, Object> partition() {
            return Collections.singletonMap("task", taskId);
        }

        /** How many records the rate allows now, waiting up to MAX_WAIT_NANOS for the next one. */
        private int allowed() throws InterruptedException {
            if (rate <= 0) {
                return batchSize;
            }
            long now = System.nanoTime();
            if (!scheduled) {
                due = now;
                scheduled = true;
            } else if (due - now > 0) {
                if (stopping.await(Math.min(due - now, MAX_WAIT_NANOS), TimeUnit.NANOSECONDS)) {
                    return 0;
                }
                now = System.nanoTime();
                if (due - now > 0) {
                    return 0;
                }
            }
            if (now - MAX_BACKLOG_NANOS - due > 0) {
                due = now - MAX_BACKLOG_NANOS;
            }
            int count = (int) Math.min(batchSize, 1 + (long) ((now - due) * rate / 1e9));
            due += (long) (count * 1e9 / rate);
            return count;
        }

        @Override
        public List<SourceRecord> poll() throws InterruptedException {
            if (stopping.getCount() == 0) {
                return null;
            }
            int count = allowed();
            if (count <= 0) {
                return null;
            }
            List<SourceRecord> records = new ArrayList<>(count);
            for (long seq = nextSeq; seq < nextSeq + count; seq++) {
                Map<String, Object> value = new HashMap<>();
                value.put("task", taskId);
                value.put("seq", seq);
                value.put("payload", "");
                records.add(new SourceRecord(partition(), Collections.singletonMap("seq", seq), topic, null,
                        Schema.STRING_SCHEMA, Long.toString(seq), null, value));
            }
            nextSeq += count;
            return records;
        }

        @Override
        public void stop() {
            stopping.countDown();
        }
    }
}
