/*
 * ftrace_fields.c - the kernel event field parser (src/hub/ftrace.c) on the lines real devices
 * print. The details below are copied in form from real captures (Pixel 4 / Android 10, a Xiaomi
 * phone / Android 11, a Nexus 5 / Android 6, trace-cmd report on a Juno board) and the expected
 * fields are the members each event's kernel print format (TP_printk) prints there, read from
 * the kernel's format files, not from the parser.
 *
 * Run with an event name and details to see how a line reads:
 *   build/tests/ftrace_fields binder_transaction 'transaction=1 dest_node=0 ...'
 */
#include "tc_ftrace.h"
#include "unit.h"

/* The fields as "name=i:12 name=u:255 name='text' name=sym:'f+0x1/0x2' name=bytes:'0c'". */
static const char *render(const char *event, const char *details)
{
    static char out[4096];
    tci_ftrace_field f[TCI_FTRACE_MAX_FIELDS];
    int n = tci_ftrace_fields(tci_ftrace_rule_of(event, strlen(event)), details, strlen(details), f,
                              TCI_FTRACE_MAX_FIELDS);
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < n && i < TCI_FTRACE_MAX_FIELDS; i++) {
        o += (size_t)snprintf(out + o, sizeof out - o, "%s%.*s=", i ? " " : "", (int)f[i].name_len, f[i].name);
        switch (f[i].type) {
        case TCI_FTV_INT: o += (size_t)snprintf(out + o, sizeof out - o, "i:%lld", (long long)f[i].i); break;
        case TCI_FTV_UINT: o += (size_t)snprintf(out + o, sizeof out - o, "u:%llu", (unsigned long long)f[i].u); break;
        case TCI_FTV_TEXT: o += (size_t)snprintf(out + o, sizeof out - o, "'%.*s'", (int)f[i].text_len, f[i].text); break;
        case TCI_FTV_SYMBOL:
            o += (size_t)snprintf(out + o, sizeof out - o, "sym:'%.*s'", (int)f[i].text_len, f[i].text);
            break;
        default: o += (size_t)snprintf(out + o, sizeof out - o, "bytes:'%.*s'", (int)f[i].text_len, f[i].text); break;
        }
    }
    return out;
}

#define FIELDS(event, details, want) CHECK_EQ_STR(render(event, details), want)

static void test_binder(void)
{
    FIELDS("binder_transaction",
           "transaction=34312627 dest_node=23915268 dest_proc=31605 dest_thread=0 reply=0 flags=0x10 code=0x4",
           "debug_id=i:34312627 target_node=i:23915268 to_proc=i:31605 to_thread=i:0 reply=i:0 flags=u:16 code=u:4");
    FIELDS("binder_transaction_received", "transaction=34312626", "debug_id=i:34312626");
    FIELDS("binder_transaction_alloc_buf", "transaction=11053226 data_size=88 offsets_size=0 extra_buffers_size=0",
           "debug_id=i:11053226 data_size=i:88 offsets_size=i:0 extra_buffers_size=i:0");
    FIELDS("binder_set_priority", "proc=31605 thread=31605 old=89 => new=120 desired=120",
           "proc=i:31605 thread=i:31605 old_prio=i:89 new_prio=i:120 desired_prio=i:120");
    /* the command's name is the kernel's lookup of cmd: not a member */
    FIELDS("binder_command", "cmd=0x40406300 BC_TRANSACTION", "cmd=u:1077961472");
}

static void test_scheduler_and_tasks(void)
{
    FIELDS("sched_blocked_reason", "pid=6371 iowait=0 caller=worker_thread+0x368/0x458",
           "pid=i:6371 io_wait=i:0 caller=sym:'worker_thread+0x368/0x458'");
    /* clone_flags is %lx: hex without 0x, also when it has no letter */
    FIELDS("task_newtask", "pid=9550 comm=RenderThread clone_flags=3d0f00 oom_score_adj=0",
           "pid=i:9550 comm='RenderThread' clone_flags=u:4001536 oom_score_adj=i:0");
    FIELDS("task_newtask", "pid=9551 comm=Binder thread clone_flags=100 oom_score_adj=-1000",
           "pid=i:9551 comm='Binder thread' clone_flags=u:256 oom_score_adj=i:-1000");
    FIELDS("sched_process_fork", "comm=zygote64 pid=700 child_comm=zygote64 child_pid=9552",
           "parent_comm='zygote64' parent_pid=i:700 child_comm='zygote64' child_pid=i:9552");
    FIELDS("sched_cpu_hotplug", "cpu 3 offline error=0", "affected_cpu=i:3 status=i:0 error=i:0");
}

static void test_irq_and_work(void)
{
    FIELDS("irq_handler_entry", "irq=32 name=90b6400.qcom,cpu-cpu-llcc-bwmon", "irq=i:32 name='90b6400.qcom,cpu-cpu-llcc-bwmon'");
    FIELDS("irq_handler_exit", "irq=52 ret=handled", "irq=i:52 ret=i:1");
    FIELDS("irq_handler_exit", "irq=52 ret=unhandled", "irq=i:52 ret=i:0");
    /* action is the kernel's name of vec: not a member */
    FIELDS("softirq_entry", "vec=6 [action=TASKLET]", "vec=i:6");
    FIELDS("ipi_entry", "(Rescheduling interrupts)", "reason='Rescheduling interrupts'");
    FIELDS("workqueue_execute_start", "work struct ffffff83b8f89238: function binder_deferred_func",
           "work=u:18446743539941937720 function=sym:'binder_deferred_func'");
    FIELDS("workqueue_execute_end", "work struct ffffff83b8f89238", "work=u:18446743539941937720");
    FIELDS("workqueue_queue_work",
           "work struct=ffffff83b8f89238 function=binder_deferred_func workqueue=ffffffdb37408c00 req_cpu=8 cpu=5",
           "work=u:18446743539941937720 function=sym:'binder_deferred_func' workqueue='ffffffdb37408c00' "
           "req_cpu=i:8 cpu=i:5");
    FIELDS("workqueue_queue_work",
           "work struct=ffffffdb3d82f630 function=vmstat_update workqueue=ffffffdb3740b600 req_cpu=256 cpu=4294967295",
           "work=u:18446743915827754544 function=sym:'vmstat_update' workqueue='ffffffdb3740b600' req_cpu=i:256 "
           "cpu=i:4294967295");
}

static void test_clocks_power_memory(void)
{
    FIELDS("cpu_frequency_limits", "min=1708800 max=1785600 cpu_id=0", "min_freq=i:1708800 max_freq=i:1785600 cpu_id=i:0");
    FIELDS("cpu_frequency_limits", "min_freq=300000 max_freq=1800000 cpu_id=4",
           "min_freq=i:300000 max_freq=i:1800000 cpu_id=i:4");
    FIELDS("clock_set_rate", "      video_subcore0_clk_src state=200000000 cpu_id=7",
           "name='video_subcore0_clk_src' state=i:200000000 cpu_id=i:7");
    FIELDS("clk_set_rate", "l3_clk 710400000", "name='l3_clk' rate=i:710400000");
    FIELDS("suspend_resume", "sync_filesystems[0] begin", "action='sync_filesystems' val=i:0 start=i:1");
    FIELDS("suspend_resume", "machine_suspend[3] end", "action='machine_suspend' val=i:3 start=i:0");
    FIELDS("rss_stat", "mm_id=2672238769 curr=1 member=0 size=3829760B", "mm_id=i:2672238769 curr=i:1 member=i:0 size=i:3829760");
    FIELDS("rss_stat", "mm_id=1617 curr=1 type=MM_ANONPAGES size=8437760B",
           "mm_id=i:1617 curr=i:1 member=i:1 size=i:8437760");
    FIELDS("ion_heap_grow", "heap_name=system, len=12288, total_allocated=40960",
           "heap_name='system' len=i:12288 total_allocated=i:40960");
    FIELDS("dma_fence_init", "driver=kgsl-timeline timeline=kgsl-3d0_7-com.miui.home(3553)-RenderThread(3690) context=13 seqno=60437",
           "driver='kgsl-timeline' timeline='kgsl-3d0_7-com.miui.home(3553)-RenderThread(3690)' context=i:13 seqno=i:60437");
    FIELDS("regulator_set_voltage", "name=pm8150l_l3 (1200000-1200000)", "name='pm8150l_l3' min=i:1200000 max=i:1200000");
    FIELDS("i2c_write", "i2c-2 #0 a=044 f=0000 l=2 [0c-00]",
           "adapter_nr=i:2 msg_nr=i:0 addr=u:68 flags=u:0 len=i:2 buf=bytes:'0c-00'");
    FIELDS("mm_filemap_add_to_page_cache", "dev 252:0 ino a0266 page=ffffffbf69b41a00 pfn=970856 ofs=163840",
           "s_dev=u:264241152 i_ino=u:655974 page=u:18446743796310088192 pfn=i:970856 ofs=i:163840");
}

static void test_prints(void)
{
    FIELDS("tracing_mark_write", "trace_event_clock_sync: parent_ts=521289.843750",
           "buf='trace_event_clock_sync: parent_ts=521289.843750'");
    FIELDS("0", "free text, with = signs", "buf='free text, with = signs'");
    FIELDS("print", "0xc00a081cf: TRACE_MARKER_START", "ip=u:51550126543 buf='TRACE_MARKER_START'");
    FIELDS("print", "tracing_mark_write: hello", "buf='hello'");
    /* trace-cmd prints bputs' %ps as the address and an 's' */
    FIELDS("bputs", "0xffff0000080feeb8s: equals_event: my_field=foo=bar", "str='equals_event: my_field=foo=bar'");
}

static void test_general_rule(void)
{
    /* an event no rule knows: key=value words; comm values keep their spaces; a unit in
     * brackets after a number is the format's ("%Lu [ns]") */
    FIELDS("sched_stat_runtime", "comm=trace-cmd pid=2461 runtime=7778999 [ns] vruntime=6087430069 [ns]",
           "comm='trace-cmd' pid=i:2461 runtime=i:7778999 vruntime=i:6087430069");
    FIELDS("thermal_power_actor_cpu_limit", "cpus=000000f0 freq=1900000 cdev_state=0 power=5036",
           "cpus='000000f0' freq=i:1900000 cdev_state=i:0 power=i:5036");
    FIELDS("sde_evtlog", "260|sde_rsc_client_state_update:876|0|1|1|1|2222|0",
           "text='260|sde_rsc_client_state_update:876|0|1|1|1|2222|0'");
    FIELDS("vendor_event", "", "");
    FIELDS("vendor_event", "a=-9223372036854775808 b=18446744073709551615 c=0x10 d=x=y",
           "a=i:-9223372036854775808 b=u:18446744073709551615 c=u:16 d='x=y'");
}

int main(int argc, char **argv)
{
    if (argc == 3) {
        printf("%s\n", render(argv[1], argv[2]));
        return 0;
    }
    UNIT_RUN(test_binder);
    UNIT_RUN(test_scheduler_and_tasks);
    UNIT_RUN(test_irq_and_work);
    UNIT_RUN(test_clocks_power_memory);
    UNIT_RUN(test_prints);
    UNIT_RUN(test_general_rule);
    return UNIT_DONE();
}
