import java.io.InputStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.hadoop.mapreduce.MiniHadoopClusterManager;

import sun.misc.Signal;

/**
 * Hadoop's CLI MiniCluster (HDFS + YARN + MapReduce JobHistory in this JVM)
 * that stops cleanly on SIGTERM, SIGINT or SIGHUP, and on end of stdin when
 * -Dmrsparse.stopOnStdinEof=true (its parent died: the pipe closed).
 *
 * The stock MiniHadoopClusterManager only sleeps once started: a signal just
 * kills the JVM, and calling stop() from a JVM shutdown hook fails half-way
 * (the DataNode refuses work once shutdown is in progress). So the manager
 * runs on a thread of its own and stop() is called from main, an ordinary
 * thread, when a stop is asked for. Arguments are the manager's
 * (-format -nnport P -rmport P -jhsport P -datanodes N -nodemanagers N
 * -writeConfig FILE -writeDetails FILE -D name=value ...).
 *
 * Exit status: 0 after a clean stop, 1 if the cluster failed to start or to
 * stop, 2 if the manager rejected its arguments.
 */
public final class MiniCluster {
    public static void main(String[] args) throws Exception {
        final MiniHadoopClusterManager manager = new MiniHadoopClusterManager();
        final CountDownLatch stop = new CountDownLatch(1);
        final AtomicReference<String> why = new AtomicReference<>();
        final AtomicReference<Throwable> failed = new AtomicReference<>();

        Thread runner = new Thread(() -> {
            try {
                manager.run(args);        // parses, starts, then sleeps forever
                why.compareAndSet(null, "bad arguments");   // run() returned: parse failed
            } catch (Throwable t) {
                failed.set(t);
                why.compareAndSet(null, "start failed");
            }
            stop.countDown();
        }, "minicluster-manager");
        runner.setDaemon(true);

        for (String name : new String[] {"TERM", "INT", "HUP"}) {
            Signal.handle(new Signal(name), sig -> {
                why.compareAndSet(null, "SIG" + sig.getName());
                stop.countDown();
            });
        }
        if (Boolean.getBoolean("mrsparse.stopOnStdinEof")) {
            Thread watcher = new Thread(() -> {
                try {
                    InputStream in = System.in;
                    while (in.read() >= 0) {
                        // ignore input; only the end matters
                    }
                } catch (Exception e) {
                    // a broken stdin counts as the end
                }
                why.compareAndSet(null, "end of stdin");
                stop.countDown();
            }, "minicluster-stdin-watcher");
            watcher.setDaemon(true);
            watcher.start();
        }

        runner.start();
        stop.await();
        System.err.println("MiniCluster: stopping (" + why.get() + ")");
        int status = 0;
        if (failed.get() != null) {
            System.err.println("MiniCluster: the cluster failed to start:");
            failed.get().printStackTrace();
            status = 1;
        } else if ("bad arguments".equals(why.get())) {
            status = 2;
        }
        try {
            manager.stop();
        } catch (Throwable t) {
            System.err.println("MiniCluster: stop failed:");
            t.printStackTrace();
            status = 1;
        }
        System.err.println("MiniCluster: stopped");
        // non-daemon threads of HDFS or YARN may linger after stop()
        System.exit(status);
    }
}
