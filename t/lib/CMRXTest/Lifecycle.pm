package CMRXTest::Lifecycle;

# A dictionary set's lifecycle checked against the documented rule ("The
# newest decision holds", DictionarySet's POD) written here a second time,
# as a fold over decisions that shares no code and no computed value with
# the distribution. Random sequences of operations -- train --all (adding,
# replacing, keeping; staged or not; through the trainer's plan, or through
# cmrx-dict with real tuning and --if-better), rollback (with and without
# --to, --stage, --dry-run; a prefix with or without its delimiter; the
# whole-cache entry), prune (with --retired-for, sampled values naming
# dictionaries, --dry-run), history, the clock moving (or not: several
# decisions in one second), a command run with a clock behind the log
# (refused, the file unchanged), a damaged manifest (each check of the log
# refuses it, naming the line), the set shipped to a host partly, then
# whole -- run with an injected clock (CMRX_DICT_NOW for the commands),
# most commands through cmrx-dict's main in this process and a share
# through bin/cmrx-dict itself. After every step the commands' outputs and
# exit statuses, list, history, the set's module and a running writer and
# reader (Zstd's compressor and decompressor following the folder) are
# checked against the model. The model knows a dictionary's ID only from a command's
# output, computes every time from its own clock, and checks each
# refusal's message.
#
# check_sequences(seed => N, sequences => N, steps => N, context =>
# make_context()) runs them and returns undef, or a failure: { seed, step,
# why, shortest (the shortest sequence that still fails: one step dropped
# at a time), shortest_why }.

use strict;
use warnings;

use Exporter 5.57 'import';
use File::Copy ();
use File::Temp ();
use JSON::PP ();
use POSIX ();
use CMRXTest::DevLib;
use CMRXDev::GetResponse qw(stored_items);

use Cache::Memcached::RustXS::Zstd qw(compress_methods frame_dictionary_id load_dictionaries train_dictionary);
use Cache::Memcached::RustXS::Zstd::DictionarySet ();
use Cache::Memcached::RustXS::Zstd::DictionarySet::State ();
use Cache::Memcached::RustXS::Dict::SetTrainer qw(write_plan);
use Cache::Memcached::RustXS::Dict::CLI ();

our @EXPORT_OK = qw(check_sequences run_sequence describe_ops make_context random_ops);

my $SET = 'Cache::Memcached::RustXS::Zstd::DictionarySet';

# The clock of a run (epoch seconds): the commands' and the writers'.
our $NOW;

# What the runs went through (a kind of step => how often), so that a
# test can say its sequences reached every case of the rule.
our %SEEN;

my @PREFIXES = ('a:', 'b:', '');            # '' is the whole-cache entry
my $DEFAULT_STAGE = 3600;                    # train --all's and a rollback's, as documented
my $BIN = 'bin/cmrx-dict';

# ---- the model: the rule, as a fold over decisions -----------------------------
#
# A decision: { seq, kind (train, rollback, cancel), prefix, dictionary
# (an ID; none for a cancel), made, effective }. A decision supersedes
# every decision of its prefix that has not taken effect when it is made
# (effective > its made); superseded decisions never take effect. At $t,
# writers use the dictionary of the latest decision (by seq) made by $t,
# not superseded, in effect by $t, that names one (a cancel changes
# nothing); none: the fallback or the whole-cache entry. Pending: the
# decision not superseded and not in effect yet. Used before: what writers
# used before the current one took effect.

sub model_new {
    return { decisions => [], removed => {}, prefix_of => {}, ids => [] };
}

# The time of the log's newest line (a decision made, a dictionary
# removed), or undef.
sub model_newest {
    my ($m) = @_;
    my ($newest) = sort { $b <=> $a } (map { $_->{made} } @{ $m->{decisions} }), values %{ $m->{removed} };
    return $newest;
}

sub model_clone {
    my ($m) = @_;
    return { decisions => [ map { +{%$_} } @{ $m->{decisions} } ], removed => { %{ $m->{removed} } },
             prefix_of => { %{ $m->{prefix_of} } }, ids => [ @{ $m->{ids} } ] };
}

sub model_decide {
    my ($m, %d) = @_;
    $SEEN{'a decision in the second of the one before'}++
        if @{ $m->{decisions} } && $m->{decisions}[-1]{made} == $d{made};
    $SEEN{'a decision superseding a pending one'}++ if model_fold($m, $d{prefix}, $d{made})->{pending};
    push @{ $m->{decisions} }, { %d, seq => 1 + @{ $m->{decisions} } };
    if (defined $d{dictionary} && !defined $m->{prefix_of}{ $d{dictionary} }) {
        push @{ $m->{ids} }, $d{dictionary};
        $m->{prefix_of}{ $d{dictionary} } = $d{prefix};
    }
    return;
}

# The prefix $p at $t: { writer, before, pending (a decision), chain (the
# decisions that changed what writers use, in order), by (seq => the seq
# that superseded it), in_effect (the seq of the last of the chain) }.
sub model_fold {
    my ($m, $p, $t) = @_;
    my @mine = grep { $_->{prefix} eq $p && $_->{made} <= $t } @{ $m->{decisions} };
    my (%by, @took, @pending);
    for my $i (0 .. $#mine) {
        my $d = $mine[$i];
        my ($newer) = grep { $_->{made} < $d->{effective} } @mine[ $i + 1 .. $#mine ];
        if ($newer) { $by{ $d->{seq} } = $newer->{seq} }
        elsif ($d->{effective} <= $t) { push @took, $d }
        else { push @pending, $d }
    }
    die "the model has two decisions pending for '$p'\n" if @pending > 1;
    my @chain = grep { $_->{kind} ne 'cancel' } @took;
    my $writer = @chain ? $chain[-1]{dictionary} : undef;
    my $before;
    for my $d (reverse @chain[ 0 .. $#chain - 1 ]) {
        next if defined $writer && $d->{dictionary} == $writer;
        $before = $d->{dictionary};
        last;
    }
    return { writer => $writer, before => $before, pending => $pending[0], chain => \@chain, by => \%by,
             in_effect => @chain ? $chain[-1]{seq} : undef };
}

sub model_writer { return model_fold(@_)->{writer} }

sub model_used {
    my ($m, $id, $t) = @_;
    return scalar grep { $_->{dictionary} == $id }
                  @{ model_fold($m, $m->{prefix_of}{$id}, $t)->{chain} };
}

sub model_state {
    my ($m, $id, $t) = @_;
    return 'removed' if $m->{removed}{$id};
    my $f = model_fold($m, $m->{prefix_of}{$id}, $t);
    return 'absent' unless grep { defined $_->{dictionary} && $_->{dictionary} == $id && $_->{made} <= $t }
                           @{ $m->{decisions} };
    return 'current' if defined $f->{writer} && $f->{writer} == $id;
    my $pd = $f->{pending} && $f->{pending}{dictionary};
    return 'staged' if defined $pd && $pd == $id;
    return 'retired';
}

# Since when dictionary $id has been retired at $t, or undef: as list's
# manual says, since writers stopped using it (the last time a decision
# took over from it, even in the second it took effect), or, for one
# they never used, since its decision was superseded or cancelled.
sub model_retired_since {
    my ($m, $id, $t) = @_;
    return undef unless model_state($m, $id, $t) eq 'retired';
    my $f = model_fold($m, $m->{prefix_of}{$id}, $t);
    my %made = map { ($_->{seq} => $_->{made}) } @{ $m->{decisions} };
    my @chain = @{ $f->{chain} };
    my $since;
    for my $i (0 .. $#chain) {
        next unless $chain[$i]{dictionary} == $id && $i < $#chain;
        $since = $chain[ $i + 1 ]{effective} if !defined $since || $chain[ $i + 1 ]{effective} > $since;
    }
    return $since if defined $since;
    for my $d (grep { defined $_->{dictionary} && $_->{dictionary} == $id && $f->{by}{ $_->{seq} } } @{ $m->{decisions} }) {
        my $at = $made{ $f->{by}{ $d->{seq} } };
        $since = $at if !defined $since || $at > $since;
    }
    return $since;
}

# The history at $t as the rule says it: per decision, its status
# (superseded, pending, in effect, took effect) and what superseded it or
# what a cancel cancelled.
sub model_history {
    my ($m, $t) = @_;
    my %fold = map { ($_ => model_fold($m, $_, $t)) } @PREFIXES;
    my @out;
    for my $d (@{ $m->{decisions} }) {
        my $f = $fold{ $d->{prefix} };
        my $status = $f->{by}{ $d->{seq} } ? 'superseded'
                   : $f->{pending} && $f->{pending}{seq} == $d->{seq} ? 'pending'
                   : defined $f->{in_effect} && $f->{in_effect} == $d->{seq} ? 'in effect' : 'took effect';
        my ($cancels) = $d->{kind} eq 'cancel' ? grep { $f->{by}{$_} == $d->{seq} } keys %{ $f->{by} } : ();
        push @out, { %$d, status => $status, by => $f->{by}{ $d->{seq} }, cancels => $cancels };
    }
    return @out;
}

# When a decision staged for $stage seconds, made at $made, takes effect:
# at once for 0; else, as cmrx-dict's manual says of --stage, the next
# whole second after the write and the duration, plus one.
sub model_effective {
    my ($made, $stage) = @_;
    return $made unless $stage;
    return POSIX::ceil($made + $stage) + 1;
}

# What rollback --prefix $p [--to $to] [--stage] decides at $t: { refuse =>
# qr/the reason/ }, { kind => 'cancel', cancels => the pending decision },
# or { kind => 'rollback', dictionary, effective }.
sub model_rollback {
    my ($m, $p, $to, $stage, $t) = @_;
    my @mine = grep { $m->{prefix_of}{$_} eq $p && !$m->{removed}{$_} } @{ $m->{ids} };
    return { refuse => qr/has no dictionary for the prefix/ } unless @mine;
    my $f = model_fold($m, $p, $t);
    my $target;
    if (defined $to) {
        return { refuse => qr/removed|file is gone/ } if $m->{removed}{$to};
        return { refuse => qr/is for the prefix/ } if $m->{prefix_of}{$to} ne $p;
        if (defined $f->{writer} && $to == $f->{writer}) {
            return { kind => 'cancel', cancels => $f->{pending} } if $f->{pending};
            return { refuse => qr/already/ };
        }
        $target = $to;
    }
    elsif ($f->{pending}) { return { kind => 'cancel', cancels => $f->{pending} } }
    else {
        $target = $f->{before};
        return { refuse => qr/has no earlier dictionary to go back to/ }
            if !defined $target || $m->{removed}{$target};
    }
    $stage = model_used($m, $target, $t) ? 0 : $DEFAULT_STAGE unless defined $stage;
    return { kind => 'rollback', dictionary => $target, effective => model_effective($t, $stage) };
}

# ---- the operations ---------------------------------------------------------------

# A random operation, in terms that do not depend on the set (so that a
# sequence with a step dropped still runs): the choices are resolved
# against the model when the step runs.
sub random_op {
    my %opt = @_;
    my $r = rand;
    my $stage = rand() < 0.4 ? 0 : 1 + int rand 40;
    my $via = rand() < ($opt{bin_share} || 0.1) ? 'bin' : 'main';
    return { op => 'train', stage => $stage, outcomes => [ map { rand } @PREFIXES ] } if $r < 0.22;
    return { op => 'train_cli', stage => rand() < 0.2 ? 'default' : $stage, if_better => (0, 5, 60)[ int rand 3 ],
             values => int rand 2, prefix => (undef, undef, 'a', 'a:')[ int rand 4 ], via => $via }
        if $r < 0.22 + ($opt{cli_train_share} || 0.03);
    return { op => 'rollback', prefix => int rand @PREFIXES, bare => rand() < 0.5 ? 1 : 0,
             stage => rand() < 0.5 ? undef : $stage, to => rand() < 0.3 ? rand : undef,
             dry_run => rand() < 0.12 ? 1 : 0, lose => rand() < 0.12 ? 1 : 0, via => $via } if $r < 0.48;
    return { op => 'prune', retired_for => (0, 0, 5, 40)[ int rand 4 ], names => int rand 1024,
             dry_run => rand() < 0.2 ? 1 : 0, via => $via } if $r < 0.55;
    return { op => 'history', prefix => int rand @PREFIXES, bare => rand() < 0.5 ? 1 : 0, via => $via } if $r < 0.58;
    return { op => 'clock', seconds => rand() < 0.5 ? 1 + int rand 10 : 'next', offset => int(rand 3) - 1 }
        if $r < 0.86;
    return { op => 'clock_back', seconds => 1 + int rand 40, command => (qw(rollback prune train))[ int rand 3 ],
             via => $via } if $r < 0.89;
    return { op => 'damage', check => int rand 1000, via => $via } if $r < 0.91;
    return { op => 'orphan', via => $via } if $r < 0.92;
    return { op => 'ship' };
}

sub random_ops { my ($n, %opt) = @_; return [ map { random_op(%opt) } 1 .. $n ] }

sub describe_ops {
    my ($ops) = @_;
    return join '', map {
        my $o = $_;
        '  ' . join(' ', $o->{op}, map { "$_=" . (ref $o->{$_} ? '[' . join(',', map { sprintf '%.2f', $_ } @{ $o->{$_} }) . ']'
                                                  : defined $o->{$_} ? $o->{$_} : 'undef') }
                              grep { $_ ne 'op' } sort keys %$o) . "\n"
    } @$ops;
}

# Runs @$ops on a fresh set; returns undef, or { step, why }.
sub run_sequence {
    my ($ops, %ctx) = @_;
    my $tmp = File::Temp->newdir;
    my %run = (%ctx, tmp => "$tmp", dir => "$tmp/set", host => "$tmp/host", model => model_new(),
               host_model => undef, writers => {}, host_writers => {}, dictionary => 0, frames => {},
               other_keys => {}, files => {});
    local $NOW = 2_000_000_000;
    local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $NOW };
    local $SIG{__WARN__} = sub { push @{ $run{warnings} }, $_[0] unless $_[0] =~ /matches no dictionary/ };
    my $step = 0;
    for my $op (@$ops) {
        $run{step} = ++$step;
        my $why = eval { step(\%run, $op) || check(\%run) };
        $why = "died: $@" unless defined $why || $@ eq '';
        $why = 'warned: ' . join '', @{ $run{warnings} } if !defined $why && $run{warnings};
        return { step => $step, why => $why } if defined $why;
    }
    return undef;
}

our %STEP = (train => \&step_train, train_cli => \&step_train_cli, rollback => \&step_rollback,
            prune => \&step_prune, history => \&step_history, clock => \&step_clock,
            clock_back => \&step_clock_back, damage => \&step_damage, ship => \&step_ship,
            orphan => \&step_orphan);

# Does $op; returns why the outputs disagree with the model, or undef.
sub step {
    my ($run, $op) = @_;
    my $do = $STEP{ $op->{op} } or die "unknown operation $op->{op}\n";
    return $do->($run, $op);
}

# train --all through the trainer's plan: the model says what each prefix
# gets; the IDs are those train --all's plan reports.
sub step_train {
    my ($run, $op) = @_;
    my ($m, $dir) = ($run->{model}, $run->{dir});
    my $set = -e "$dir/manifest" ? $SET->read($dir) : $SET->create($dir);
    my (@decisions, $whole);
    for my $i (0 .. $#PREFIXES) {
        my $p = $PREFIXES[$i];
        my $f = model_fold($m, $p, $NOW);
        my $outcome = defined $f->{writer} || $f->{pending} ? ($op->{outcomes}[$i] < 0.5 ? 'replace' : 'keep')
                                                            : ($op->{outcomes}[$i] < 0.7 ? 'add' : 'none');
        my $d = _plan_decision($run, $p, $outcome);
        if (length $p) { push @decisions, $d } else { $whole = $d }
    }
    my $plan = { prefixes => \@decisions, whole_cache => $whole, sampled => { dictionary_ids => {} } };
    write_plan($set, $plan, stage => $op->{stage}, fallback => { method => 'zstd', level => 3 });
    my %since = map { ($_->{entry}{id} => $_->{since}) } $set->schedule;
    for my $d (grep { $_->{entry} } @decisions, $whole) {
        my $p = $d->{set_prefix};
        my $why = _check_added($run, $op->{stage}, _shown($p), $d->{state}, $since{ $d->{entry}{id} });
        return "train: $why" if defined $why;
        model_decide($run->{model}, kind => 'train', prefix => $p, dictionary => 0 + $d->{entry}{id},
                     made => $NOW, effective => model_effective($NOW, $op->{stage}));
        $run->{other_keys}{ $d->{entry}{id} } = 0 unless length $p;
    }
    _start_following($run) unless $run->{following};
    return undef;
}

# What an added dictionary's state and start say, against the model; undef
# when they agree.
sub _check_added {
    my ($run, $stage, $p, $state, $from) = @_;
    my $want = $stage ? 'staged' : 'current';
    return "$p added as " . _id($state) . ", the model says $want" if _id($state) ne $want;
    return undef unless $stage;
    my $effective = _date(model_effective($NOW, $stage));
    return "$p staged --stage $stage at " . _date($NOW) . ': current from ' . _id($from) . ", the model says $effective"
        if _id($from) ne $effective;
    return undef;
}

# train --all run as a user runs it, on files of values, with real tuning.
sub step_train_cli {
    my ($run, $op) = @_;
    my $m = $run->{model};
    my $stage = $op->{stage} eq 'default' ? $DEFAULT_STAGE : $op->{stage};
    my @args = ('train', '--all', '--out-dir', $run->{dir}, ($op->{stage} eq 'default' ? () : ('--stage', $stage)),
                '--if-better', $op->{if_better}, '--size', 2048, '--levels', 3, '--methods', 'fastcover', '--json',
                (defined $op->{prefix} ? ('--prefix', $op->{prefix}) : ()), @{ $run->{value_files}[ $op->{values} ] });
    my $r = cli($run, $op->{via}, @args);
    return "train --all exited $r->{rc}: $r->{err}" if $r->{rc} != 0;
    my $out = $r->{json};
    my @rows = (@{ $out->{prefixes} || [] }, $out->{whole_cache} || ());
    for my $row (@rows) {
        my $p = length $row->{prefix} ? $row->{prefix} : '';
        $p = '' if $row == ($out->{whole_cache} || 0);
        return "train --all --prefix $op->{prefix}: it tuned " . _shown($p)
            if defined $op->{prefix} && $p ne 'a:';
        my $f = model_fold($m, $p, $NOW);
        return "train --all: " . _shown($p) . " has dictionary " . _id($f->{writer}) . ", and the output says $row->{action}"
            if defined $f->{writer} && $row->{action} eq 'added';
        return "train --all: " . _shown($p) . " has no dictionary, and the output says $row->{action}"
            if !defined $f->{writer} && !$f->{pending} && $row->{action} =~ /replaced|kept/;
        if ($row->{current}) {
            # --if-better measured against what writers use, or will once
            # what is pending takes effect: nothing else.
            my @may = grep { defined } $f->{writer}, $f->{pending} && $f->{pending}{dictionary};
            return 'train --all --if-better: ' . _shown($p) . " measured against $row->{current}{id}, the model says "
                 . (@may ? join(' or ', @may) : 'none') unless grep { $_ == $row->{current}{id} } @may;
        }
        $SEEN{"train --all: $row->{action}" . (length $p ? '' : ', whole cache')}++;
        next unless $row->{entry};
        my $why = _check_added($run, $stage, _shown($p), $row->{state}, $out->{current_from});
        return "train --all: $why" if defined $why;
        model_decide($m, kind => 'train', prefix => $p, dictionary => 0 + $row->{entry}{id},
                     made => $NOW, effective => model_effective($NOW, $stage));
        $run->{other_keys}{ $row->{entry}{id} } = $row->{other_keys} && $row->{other_keys}{use} ? 1 : 0
            unless length $p;
    }
    _start_following($run) unless $run->{following} || !-e "$run->{dir}/manifest";
    return undef;
}

# The model, the set's folder and the prefix a step acts on; nothing
# while there is no set yet (the step then does nothing).
sub _set_and_prefix {
    my ($run, $op) = @_;
    return unless -e "$run->{dir}/manifest";
    return ($run->{model}, $run->{dir}, $PREFIXES[ $op->{prefix} ]);
}

sub step_rollback {
    my ($run, $op) = @_;
    my ($m, $dir, $p) = _set_and_prefix($run, $op) or return undef;
    my $given = $op->{bare} && length $p ? substr($p, 0, -1) : $p;    # user and user: alike
    my $to = defined $op->{to} && @{ $m->{ids} } ? $m->{ids}[ int($op->{to} * @{ $m->{ids} }) ] : undef;
    my $want = model_rollback($m, $p, $to, $op->{stage}, $NOW);
    my $lost;
    if ($op->{lose} && $want->{kind} && $want->{kind} eq 'rollback' && $run->{files}{ $want->{dictionary} }) {
        # Its file lost by hand: the rollback must be refused, naming it.
        $lost = $run->{files}{ $want->{dictionary} };
        rename "$dir/$lost", "$run->{tmp}/lost" or die "rename $lost: $!";
        $want = { refuse => qr/\Q$lost\E/ };
    }
    my $manifest = _slurp("$dir/manifest");
    my $r = cli($run, $op->{via}, 'rollback', '--dictionaries', $dir, '--prefix', $given, '--json',
                (defined $to ? ('--to', $to) : ()), (defined $op->{stage} ? ('--stage', $op->{stage}) : ()),
                ($op->{dry_run} ? '--dry-run' : ()));
    rename "$run->{tmp}/lost", "$dir/$lost" or die "rename back $lost: $!" if $lost;
    my $what = 'rollback --prefix ' . _shown($given) . (defined $to ? " --to $to" : '')
             . ($op->{dry_run} ? ' --dry-run' : '') . ($lost ? " (file $lost missing)" : '');
    if ($want->{refuse}) {
        $SEEN{ $lost ? 'rollback refused: file missing' : "rollback refused: $want->{refuse}" }++;
        return "$what: the model refuses ($want->{refuse}), it exited $r->{rc}" . ($r->{rc} ? ": $r->{err}" : '')
            unless $r->{rc} == 1 && $r->{err} =~ $want->{refuse} && $r->{err} =~ /\Acmrx-dict: /;
        return "$what: refused, and the manifest changed" if _slurp("$dir/manifest") ne $manifest;
        return undef;
    }
    return "$what exited $r->{rc}: $r->{err}" if $r->{rc} != 0;
    my $out = $r->{json};
    return "$what: a $out->{kind}, the model makes a $want->{kind}" if $out->{kind} ne $want->{kind};
    if ($want->{kind} eq 'cancel') {
        return "$what: cancelled " . _id($out->{cancelled} && $out->{cancelled}{id}) . ', the model '
             . _id($want->{cancels}{dictionary})
            if _id($out->{cancelled} && $out->{cancelled}{id}) ne _id($want->{cancels}{dictionary});
    }
    else {
        return "$what: to $out->{to}, the model to $want->{dictionary}" if $out->{to} != $want->{dictionary};
        my $when = _date($want->{effective});
        return "$what: current from $out->{current_from}, the model says $when" if $out->{current_from} ne $when;
    }
    $SEEN{ 'rollback: ' . ($want->{kind} eq 'cancel' ? 'cancel' : $want->{effective} > $NOW ? 'staged' : 'at once')
           . ($op->{dry_run} ? ', dry run' : '') . (length $p ? '' : ', whole cache') }++;
    if ($op->{dry_run}) {
        return "$what: the manifest changed" if _slurp("$dir/manifest") ne $manifest;
        return undef;
    }
    model_decide($m, kind => $want->{kind}, prefix => $p, dictionary => $want->{dictionary},
                 made => $NOW, effective => $want->{kind} eq 'cancel' ? $NOW : $want->{effective});
    return undef;
}

sub step_prune {
    my ($run, $op) = @_;
    my ($m, $dir) = ($run->{model}, $run->{dir});
    return undef unless -e "$dir/manifest";
    # Sampled values: frames the writers wrote, some of the dictionaries'.
    my @known = sort { $a <=> $b } keys %{ $run->{frames} };
    my %named = map { ($known[$_] => 1) } grep { ($op->{names} >> ($_ % 10)) & 1 } 0 .. $#known;
    my $dump = "$run->{tmp}/sampled.dump";
    open my $fh, '>', $dump or die "$dump: $!";
    binmode $fh;
    my $n = 0;
    for my $id (sort { $a <=> $b } keys %named) {
        my $frame = $run->{frames}{$id};
        printf {$fh} "VALUE a:sampled%d 2 %d\r\n%s\r\n", ++$n, length $frame, $frame;
    }
    print {$fh} "END\r\n";
    close $fh or die "$dump: $!";
    my $manifest = _slurp("$dir/manifest");
    my $r = cli($run, $op->{via}, 'prune', '--dictionaries', $dir, '--retired-for', $op->{retired_for},
                '--sample', 1000, '--json', ($op->{dry_run} ? '--dry-run' : ()), $dump);
    return "prune exited $r->{rc}: $r->{err}" if $r->{rc} != 0;
    my %acted = map { ($_->{id} => $_->{action}) } @{ $r->{json}{dictionaries} };
    my @removed = sort { $a <=> $b } grep { $acted{$_} eq 'remove' } keys %acted;
    for my $id (@{ $m->{ids} }) {
        next if $m->{removed}{$id};
        my $state = model_state($m, $id, $NOW);
        my $since = $state eq 'retired' ? model_retired_since($m, $id, $NOW) : undef;
        my $may = $state eq 'retired' && !$named{$id}
               && (!defined $since || $NOW - $since >= $op->{retired_for});
        my $must = $may;
        my $why = "$state" . ($named{$id} ? ', named by a sampled value' : '')
                . (defined $since ? ', retired for ' . ($NOW - $since) . ' s' : '');
        return "prune --retired-for $op->{retired_for}: removed $id ($why), the model keeps it"
            if _id($acted{$id}) eq 'remove' && !$may;
        return "prune --retired-for $op->{retired_for}: kept $id ($why), the model removes it"
            if _id($acted{$id}) ne 'remove' && $must;
        $SEEN{'prune: removed'}++ if _id($acted{$id}) eq 'remove';
        $SEEN{'prune: kept, named by a sampled value'}++ if $state eq 'retired' && $named{$id};
        $SEEN{'prune: kept, retired too recently'}++
            if $state eq 'retired' && !$named{$id} && !$may && _id($acted{$id}) ne 'remove';
    }
    if ($op->{dry_run}) {
        return 'prune --dry-run: the manifest changed' if _slurp("$dir/manifest") ne $manifest;
        return undef;
    }
    # It writes the set when it removes a dictionary, and only then.
    return 'prune removed ' . (@removed ? "@removed" : 'nothing') . ' and says the set '
         . ($r->{json}{changed} ? 'changed' : 'did not change') if !@removed != !$r->{json}{changed};
    for my $id (@removed) {
        $m->{removed}{$id} = $NOW;
        return "prune: removed $id, and its file is still there" if -e "$dir/$run->{files}{$id}";
    }
    return undef;
}

# history --prefix P (with or without its delimiter): that prefix's decisions.
sub step_history {
    my ($run, $op) = @_;
    return undef unless -e "$run->{dir}/manifest";
    my $p = $PREFIXES[ $op->{prefix} ];
    my $given = $op->{bare} && length $p ? substr($p, 0, -1) : $p;
    my $r = cli($run, $op->{via}, 'history', '--dictionaries', $run->{dir}, '--prefix', $given, '--json');
    return "history --prefix " . _shown($given) . " exited $r->{rc}: $r->{err}" if $r->{rc} != 0;
    return _compare_history([ grep { $_->{prefix} eq $p } model_history($run->{model}, $NOW) ],
                            $r->{json}{decisions}, 'history --prefix ' . _shown($given));
}

# The set's dictionaries without its manifest (a manifest lost): train
# --all into that folder must refuse, say how to start over, and change
# nothing.
sub step_orphan {
    my ($run, $op) = @_;
    my $dir = $run->{dir};
    my @files = grep { -e "$dir/$_" } map { $run->{files}{$_} } grep { !$run->{model}{removed}{$_} } @{ $run->{model}{ids} };
    return undef unless @files;
    my $orphan = "$run->{tmp}/orphan";
    mkdir $orphan or die "$orphan: $!";
    File::Copy::copy("$dir/$_", "$orphan/$_") or die "copy $_: $!" for @files;
    my $r = cli($run, $op->{via}, 'train', '--all', '--out-dir', $orphan, '--size', 2048, '--levels', 3,
                '--methods', 'fastcover', @{ $run->{value_files}[0] });
    opendir my $dh, $orphan or die "$orphan: $!";
    my @left = sort grep { !/\A\./ } readdir $dh;
    closedir $dh;
    unlink map { "$orphan/$_" } @left;
    rmdir $orphan or die "rmdir $orphan: $!";
    return "train --all into dictionaries without a manifest: exited $r->{rc}: $r->{err}"
        unless $r->{rc} == 1 && $r->{err} =~ /manifest/ && $r->{err} =~ /empty folder/ && $r->{err} =~ /remove/;
    return "train --all into dictionaries without a manifest changed the folder (@left)"
        if "@left" ne join ' ', sort @files;
    $SEEN{'train --all refused: dictionaries without a manifest'}++;
    return undef;
}

sub step_clock {
    my ($run, $op) = @_;
    my $m = $run->{model};
    my $by = $op->{seconds};
    if ($by eq 'next') {
        my ($next) = sort { $a <=> $b } map { $_->{pending} ? $_->{pending}{effective} : () }
                     map { model_fold($m, $_, $NOW) } @PREFIXES;
        $by = defined $next ? $next - $NOW + $op->{offset} : 1;
        $by = 1 if $by < 1;
    }
    $NOW += $by;
    return undef;
}

# A command that would append to the log, run with a clock $op->{seconds}
# behind its newest line: refused, naming both times, the folder unchanged.
sub step_clock_back {
    my ($run, $op) = @_;
    my ($m, $dir) = ($run->{model}, $run->{dir});
    my $newest = model_newest($m);
    return undef unless -e "$dir/manifest" && defined $newest;
    my $manifest = _slurp("$dir/manifest");
    my @args = $op->{command} eq 'rollback' ? ('rollback', '--dictionaries', $dir, '--prefix', 'a:')
             : $op->{command} eq 'prune' ? ('prune', '--dictionaries', $dir, '--retired-for', 0, "$run->{tmp}/none.dump")
             : ('train', '--all', '--out-dir', $dir, '--size', 2048, '--levels', 3, '--methods', 'fastcover',
                @{ $run->{value_files}[0] });
    _spew("$run->{tmp}/none.dump", "END\r\n");
    my $r = do { local $NOW = $newest - $op->{seconds}; cli($run, $op->{via}, @args) };
    my $says = qr/\Acmrx-dict: the clock says \Q${\ _date($newest - $op->{seconds})}\E, earlier than the newest line of the set's log \(line \d+, \Q${\ _date($newest)}\E\): time only moves forward: nothing was changed/;
    return "$op->{command} with the clock $op->{seconds} s behind the log: exited $r->{rc}: $r->{err}"
        unless $r->{rc} == 1 && $r->{err} =~ $says;
    return "$op->{command} with the clock behind the log changed the manifest" if _slurp("$dir/manifest") ne $manifest;
    $SEEN{"refused: a clock behind the log ($op->{command})"}++;
    return undef;
}

# Damages of the manifest, each otherwise valid, and what refuses them:
# [ name, the line changed (a regex), the change, the check's words ].
my @DAMAGE = (
    [ 'effective before made', qr/^(decision seq=\d+ .* made=)(\S+) effective=\S+$/m,
      sub { "$1$2 effective=" . _date(_epoch($2) - 5) }, qr/effective \S+ is before made/ ],
    [ 'a missing dictionary', qr/^(decision seq=\d+ kind=(?:train|rollback) .*) dictionary=\d+/m,
      sub { "$1 dictionary=7" }, qr/dictionary '7' is on no dictionary line before it/ ],
    [ "another prefix's dictionary", qr/^(decision seq=\d+ kind=(?:train|rollback) prefix=a:) dictionary=\d+/m,
      sub { my $head = $1; my $b = $_[0] =~ /^dictionary id=(\d+) prefix=b: /m ? $1 : 7; "$head dictionary=$b" },
      qr/(?:is of the prefix 'b:', not 'a:'|is on no dictionary line before it)/ ],
    [ 'a seq repeated', qr/^decision seq=(\d+) (.*)$/m, sub { "decision seq=$1 $2\ndecision seq=$1 $2" },
      qr/where seq \d+ is next: a seq repeated, out of order or missing/ ],
    [ 'time going back', qr/\z/,
      sub { 'decision seq=' . (1 + (() = $_[0] =~ /^decision /mg)) . ' kind=cancel prefix=a: '
          . "made=2000-01-01T00:00:00Z effective=2000-01-01T00:00:00Z\n" },
      qr/time order: made 2000-01-01T00:00:00Z is earlier than line \d+'s/ ],
    [ 'the removal of a dictionary in use', undef, undef, qr/removed while the writers of its prefix use it/ ],
);

# The manifest damaged in one of the ways above: list and a rollback
# refuse it, naming the line and the check, and leave it as it is.
sub step_damage {
    my ($run, $op) = @_;
    my ($m, $dir) = ($run->{model}, $run->{dir});
    return undef unless -e "$dir/manifest";
    my $good = _slurp("$dir/manifest");
    my ($name, $re, $change, $says) = @{ $DAMAGE[ $op->{check} % @DAMAGE ] };
    my $bad = $good;
    if ($name eq 'the removal of a dictionary in use') {
        # Of a prefix's writer now, removed now.
        my ($p) = grep { defined model_writer($m, $_, $NOW) } @PREFIXES or return undef;
        $bad .= 'removed id=' . model_writer($m, $p, $NOW) . " prefix=$p removed=" . _date($NOW) . "\n";
    }
    else {
        $bad =~ s/$re/$change->($good)/e or return undef;
    }
    _spew("$dir/manifest", $bad);
    my $list = cli($run, $op->{via}, 'list', '--dictionaries', $dir);
    my $back = cli($run, 'main', 'rollback', '--dictionaries', $dir, '--prefix', 'a:');
    my $after = _slurp("$dir/manifest");
    _spew("$dir/manifest", $good);
    for my $r ($list, $back) {
        return "a manifest damaged ($name): exited $r->{rc}: $r->{err}"
            unless $r->{rc} == 1 && $r->{err} =~ /\Acmrx-dict: \Q$dir\E\/manifest: line \d+: / && $r->{err} =~ $says
                   && $r->{err} =~ /refused, nothing changed\n\z/;
    }
    return "a manifest damaged ($name) was written over" if $after ne $bad;
    $SEEN{"refused: a manifest damaged ($name)"}++;
    return undef;
}

sub step_ship {
    my ($run) = @_;
    my $dir = $run->{dir};
    return undef unless -e "$dir/manifest";
    mkdir $run->{host} unless -d $run->{host};
    opendir my $dh, $dir or die "$dir: $!";
    my @files = grep { /\.dict\z/ } readdir $dh;
    closedir $dh;
    # Partly: the dictionary files, not the manifest yet.
    File::Copy::copy("$dir/$_", "$run->{host}/$_") or die "copy $_: $!" for @files;
    if ($run->{host_model}) {
        my $why = check_folder($run, $run->{host}, $run->{host_model}, $run->{host_writers}, 'host, shipped partly');
        return $why if defined $why;
    }
    File::Copy::copy("$dir/manifest", "$run->{host}/manifest.new") or die "copy manifest: $!";
    rename "$run->{host}/manifest.new", "$run->{host}/manifest" or die "rename: $!";
    $run->{host_model} = model_clone($run->{model});
    unless (%{ $run->{host_writers} }) {
        load_dictionaries($run->{host}, rescan_interval => 0);
        $run->{host_writers} = _writers($run->{host});
    }
    return undef;
}

# ---- the checks after every step ---------------------------------------------------

sub check {
    my ($run) = @_;
    return undef unless -e "$run->{dir}/manifest";
    my $why = check_folder($run, $run->{dir}, $run->{model}, $run->{writers}, 'admin');
    return $why if defined $why || !$run->{host_model};
    return check_folder($run, $run->{host}, $run->{host_model}, $run->{host_writers}, 'host');
}

sub check_folder {
    my ($run, $dir, $m, $writers, $where) = @_;
    $where .= ' at ' . _date($NOW);
    my $list = cli($run, 'main', 'list', '--dictionaries', $dir, '--json');
    return "$where: list exited $list->{rc}: $list->{err}" if $list->{rc} != 0;
    my %listed = map { ($_->{id} => $_->{state}) } @{ $list->{json}{dictionaries} };
    $run->{files}{ $_->{id} } = $_->{file} for grep { defined $_->{file} } @{ $list->{json}{dictionaries} };
    for my $id (@{ $m->{ids} }) {
        my $want = model_state($m, $id, $NOW);
        return "$where: list says dictionary $id is " . _id($listed{$id}) . ", the model says $want"
            if _id($listed{$id}) ne $want;
    }
    my %known = map { ($_ => 1) } @{ $m->{ids} };
    my @unknown = grep { !$known{$_} } sort keys %listed;
    return "$where: list shows dictionaries the model does not know: @unknown" if @unknown;
    my $h = cli($run, 'main', 'history', '--dictionaries', $dir, '--json');
    return "$where: history exited $h->{rc}: $h->{err}" if $h->{rc} != 0;
    my $why = _compare_history([ model_history($m, $NOW) ], $h->{json}{decisions}, "$where: history");
    return $why if defined $why;
    my $set = $SET->read($dir);
    for my $p (@PREFIXES) {
        my $want = model_writer($m, $p, $NOW);
        my $c = $set->current($p);
        return "$where: " . _shown($p) . ' writes with ' . _id($c && $c->{id}) . ', the model says ' . _id($want)
            if _id($c && $c->{id}) ne _id($want);
    }
    # The writers of every prefix (each reads the folder).
    my %in_set = map { ($_->{id} => 1) } $set->for_readers;
    for my $p (@PREFIXES) {
        my $w = length $p ? $writers->{$p} : _whole_cache_writer($dir, $m, $writers);
        my $why = $w && _check_writer($run, $m, $p, $w, $where, \%in_set);
        return $why if $why;
    }
    return undef;
}

sub _check_writer {
    my ($run, $m, $p, $w, $where, $in_set) = @_;
    my $want = model_writer($m, $p, $NOW);
    my @may = defined $want ? ($want) : (0);
    if (!defined $want && length $p) {
        # No dictionary of its own: the fallback, or the whole-cache entry
        # when it is for other keys.
        my $whole = model_writer($m, '', $NOW);
        @may = ($whole) if defined $whole && $run->{other_keys}{$whole};
    }
    my $value = $run->{values}{$p};
    my ($frame, $back) = ('', '');
    $w->[0]->(\$value, \$frame) or return "$where: the " . _shown($p) . ' writer declined';
    my $used = frame_dictionary_id($frame) || 0;
    return "$where: the " . _shown($p) . " writer wrote with $used, the model says @may" unless grep { $_ == $used } @may;
    return "$where: the " . _shown($p) . " writer wrote with dictionary $used, which a reader holding the set lacks"
        if $used && (!$in_set->{$used} || $m->{removed}{$used});
    $w->[1]->(\$frame, \$back) && $back eq $value
        or return "$where: the reader cannot read the " . _shown($p) . ' value';
    $run->{frames}{$used} = $frame if $used;
    return undef;
}

# history's decisions against the model's; undef when they agree.
sub _compare_history {
    my ($want, $got, $what) = @_;
    $got ||= [];
    return "$what: " . @$got . ' decisions, the model ' . @$want if @$got != @$want;
    for my $i (0 .. $#$want) {
        my ($w, $g) = ($want->[$i], $got->[$i]);
        my %w = (seq => $w->{seq}, kind => $w->{kind}, prefix => $w->{prefix}, dictionary => _id($w->{dictionary}),
                 made => _date($w->{made}), effective => _date($w->{effective}), status => $w->{status},
                 superseded_by => _id($w->{by}), cancels => _id($w->{cancels}));
        my %g = (%$g, dictionary => _id($g->{dictionary}), superseded_by => _id($g->{superseded_by}),
                 cancels => _id($g->{cancels}));
        for my $k (sort keys %w) {
            return "$what: decision $w{seq}'s $k is " . _id($g{$k}) . ", the model says $w{$k}"
                if _id($g{$k}) ne $w{$k};
        }
    }
    return undef;
}

# ---- running cmrx-dict -----------------------------------------------------------------

# cmrx-dict @args at the run's clock: through its main in this process
# ($via 'main') or as bin/cmrx-dict ('bin'); { rc, out, err, json }.
sub cli {
    my ($run, $via, @args) = @_;
    local $ENV{CMRX_DICT_NOW} = $NOW;
    my ($out, $err, $rc) = ('', '');
    if ($via eq 'bin') {
        my ($o, $e) = ("$run->{tmp}/stdout", "$run->{tmp}/stderr");
        my $pid = fork;
        die "fork: $!" unless defined $pid;
        if (!$pid) {
            open STDOUT, '>', $o or die "$o: $!";
            open STDERR, '>', $e or die "$e: $!";
            exec $^X, (map { "-I$_" } grep { !ref } @INC), $BIN, @args or POSIX::_exit(127);
        }
        waitpid $pid, 0;
        $rc = $? >> 8;
        ($out, $err) = (_slurp($o), _slurp($e));
    }
    else {
        local *STDOUT;
        local *STDERR;
        open STDOUT, '>', \$out or die "stdout: $!";
        open STDERR, '>', \$err or die "stderr: $!";
        $rc = Cache::Memcached::RustXS::Dict::CLI::main(@args);
        close STDOUT;
        close STDERR;
    }
    my $json = $rc == 0 && $out =~ /\A\s*\{/ ? JSON::PP->new->decode($out) : undef;
    return { rc => $rc, out => $out, err => $err, json => $json };
}

# ---- helpers ---------------------------------------------------------------------

# The writers of the prefixes, following $dir; the whole cache's once the
# set has a whole-cache entry (a writer without prefix is refused before).
sub _writers {
    my ($dir) = @_;
    return { map { ($_ => scalar compress_methods(dictionaries => $dir, prefix => $_, rescan_interval => 0)) }
             grep { length } @PREFIXES };
}

sub _whole_cache_writer {
    my ($dir, $m, $writers) = @_;
    return $writers->{''} if $writers->{''} || !%$writers;
    my $state = model_fold($m, '', $NOW);
    return undef unless defined $state->{writer} || ($state->{pending} && defined $state->{pending}{dictionary});
    return $writers->{''} = scalar compress_methods(dictionaries => $dir, rescan_interval => 0);
}

sub _start_following {
    my ($run) = @_;
    load_dictionaries($run->{dir}, rescan_interval => 0);
    $run->{writers} = _writers($run->{dir});
    $run->{following} = 1;
    return;
}

# A decision as train --all's plan has it, with one of the pre-trained
# dictionaries.
sub _plan_decision {
    my ($run, $p, $outcome) = @_;
    my $dicts = $run->{dictionaries};
    my $bytes = $dicts->[ $run->{dictionary}++ % @$dicts ];
    return { set_prefix => $p, outcome => $outcome, group => { prefix => $p, pairs => [] },
             (length $p ? () : (whole_cache => 1, other_keys => { use => 0 })),
             tuned => { dictionary => $bytes, held_out_bytes => 1000, samples => 10,
                        choice => { level => 3, bytes => 500, memory => 1000, method => 'samples', size => length $bytes },
                        baseline => { memGzip => { memory => 2000 } } } };
}

sub _id { defined $_[0] ? $_[0] : 'none' }

sub _shown { length $_[0] ? "'$_[0]'" : q{'' (the whole cache)} }

sub _date { defined $_[0] ? POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime $_[0]) : 'none' }

sub _epoch {
    my ($date) = @_;
    my @t = $date =~ /\A(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)Z\z/ or die "not a date: $date\n";
    require Time::Local;
    return Time::Local::timegm($t[5], $t[4], $t[3], $t[2], $t[1] - 1, $t[0]);
}

sub _spew {
    my ($path, $bytes) = @_;
    open my $fh, '>', $path or die "$path: $!";
    binmode $fh;
    print {$fh} $bytes;
    close $fh or die "$path: $!";
    return;
}

sub _slurp {
    my ($path) = @_;
    open my $fh, '<', $path or return undef;
    binmode $fh;
    local $/;
    return scalar <$fh>;
}

# What the runs share: small dictionaries made once (each add gives one a
# new ID), the values the writers write, and files of values (get
# responses of keys a:... and b:...) for train --all with real tuning.
sub make_context {
    my (%opt) = @_;
    my $tmp = File::Temp->newdir;
    my @gh = _values('bench/data/values/gh.values');
    my @news = _values('bench/data/values/news.values');
    my @files;
    for my $half (0, 1) {
        my @pair;
        for my $group ([ a => \@gh ], [ b => \@news ]) {
            my ($name, $values) = @$group;
            my $path = "$tmp/$name$half.values";
            open my $fh, '>', $path or die "$path: $!";
            binmode $fh;
            my @mine = $half ? grep { $_ % 4 } 0 .. $#$values : 0 .. $#$values;
            printf {$fh} "VALUE %s:%04d 0 %d\r\n%s\r\n", $name, $_, length $values->[$_], $values->[$_] for @mine;
            print {$fh} "END\r\n";
            close $fh or die "$path: $!";
            push @pair, $path;
        }
        push @files, \@pair;
    }
    my @dictionaries = map { train_dictionary([ @gh[ 10 * $_ .. 10 * $_ + 19 ] ], size => 2048) } 0 .. 3;
    return { tmp => $tmp, dictionaries => \@dictionaries, value_files => \@files,
             values => { 'a:' => $gh[-1], 'b:' => $news[-1], '' => $gh[-2] } };
}

sub _values {
    my ($path) = @_;
    my $bytes = _slurp($path);
    die "$path: $!" unless defined $bytes;
    # A corpus file is a get response: read by the distribution's parser.
    return map { $_->[2] } @{ stored_items($bytes) };
}

# Runs $sequences random sequences of $steps steps from $seed; returns
# undef or the first failure, shrunk.
sub check_sequences {
    my (%opt) = @_;
    my $ctx = $opt{context};
    my %ctx = (dictionaries => $ctx->{dictionaries}, values => $ctx->{values}, value_files => $ctx->{value_files});
    for my $n (0 .. $opt{sequences} - 1) {
        my $seed = $opt{seed} + $n;
        srand $seed;
        my $ops = random_ops($opt{steps}, %{ $opt{mix} || {} });
        my $failed = run_sequence($ops, %ctx) or next;
        my @short = @$ops[ 0 .. $failed->{step} - 1 ];
        my $why = $failed->{why};
        my $tries = $opt{shrink_runs} || 300;
        DROP: while ($tries > 0) {
            for my $i (reverse 0 .. $#short) {
                last DROP if --$tries < 0;
                my @fewer = @short[ grep { $_ != $i } 0 .. $#short ];
                my $still = run_sequence(\@fewer, %ctx) or next;
                @short = @fewer[ 0 .. $still->{step} - 1 ];
                $why = $still->{why};
                next DROP;
            }
            last;
        }
        return { seed => $seed, step => $failed->{step}, why => $failed->{why}, shortest => \@short,
                 shortest_why => $why };
    }
    return undef;
}

1;
