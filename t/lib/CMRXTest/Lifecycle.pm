package CMRXTest::Lifecycle;

# A dictionary set's lifecycle checked as a state machine: random sequences
# of the operations (train --all adding, replacing, keeping, staged or not,
# with or without --if-better; rollback with and without --to and --stage;
# prune; the clock moving past staged times; a manifest rewritten by
# release 0.101; the set shipped to a host partly, then whole) run against
# the modules the cmrx-dict commands call, and after every step the
# commands' outputs, the manifest, 0.101's reader and a running writer and
# reader (Zstd's compressor and decompressor following the folder) are
# checked against a reference model. The model is written here in its own
# terms and calls no function of the distribution.
#
# check_sequences(seed => N, sequences => N, steps => N, dictionaries =>
# [bytes...], values => { prefix => value }) runs them and returns undef,
# or a failure: { seed, step, why, ops (the sequence), shortest (the
# shortest sequence that still fails: one step dropped at a time) }.

use strict;
use warnings;

use Exporter 5.57 'import';
use File::Copy ();
use File::Temp ();

our @EXPORT_OK = qw(check_sequences run_sequence describe_ops);

# The clock the run moves (epoch seconds). Release 0.101's module reads
# the time with perl's time: it is compiled after this, so it reads this.
our $NOW;
BEGIN { *CORE::GLOBAL::time = sub () { defined $NOW ? int $NOW : CORE::time() } }

use Cache::Memcached::RustXS::Zstd qw(compress_methods frame_dictionary_id load_dictionaries);
use Cache::Memcached::RustXS::Zstd::DictionarySet ();
use Cache::Memcached::RustXS::Zstd::DictionarySet::State ();
use Cache::Memcached::RustXS::Dict::SetTrainer qw(write_plan staged_from);
use Cache::Memcached::RustXS::Dict::Rollout qw(list_set rollback_set);
use Cache::Memcached::RustXS::Dict::Prune qw(prune_set);
use Cache::Memcached::RustXS::Dict::Files ();

my $SET = 'Cache::Memcached::RustXS::Zstd::DictionarySet';
my $OLD = 'CMRXFixture::DictionarySet0101';
require './t/data/v0101/DictionarySet0101.pm';

my @PREFIXES = ('a:', 'b:');

# ---- the reference model ------------------------------------------------------
#
# Per prefix, the decisions made, in order: { id, start (when writers take
# it up), cancelled }. Writers of a prefix use, at t, the decision started
# last by t (of two started together, the one made last) that was not
# cancelled. A dictionary is current when its prefix's writers use it,
# staged when a decision not cancelled will start it later, removed when
# pruned, else retired. Rolling back without a target, while a decision
# is pending, cancels the pending ones and writers keep the current one
# (the newest decision holds); else it goes to the dictionary writers used
# before the current decision (skipping removed ones and the current one),
# cancelled decisions counting for nothing.
# Every reader that holds the set holds every dictionary not removed.

sub model_new { return { decisions => {}, removed => {}, ids => [], prefix_of => {} } }

sub model_clone {
    my ($m) = @_;
    return { decisions => { map { ($_ => [ map { +{%$_} } @{ $m->{decisions}{$_} } ]) } keys %{ $m->{decisions} } },
             removed => { %{ $m->{removed} } }, ids => [ @{ $m->{ids} } ], prefix_of => { %{ $m->{prefix_of} } } };
}

sub model_started {
    my ($m, $p, $t) = @_;
    return grep { !$_->{cancelled} && $_->{start} <= $t } @{ $m->{decisions}{$p} || [] };
}

sub model_in_use {
    my ($m, $p, $t) = @_;
    my $use;
    for my $d (model_started($m, $p, $t)) { $use = $d if !$use || $d->{start} >= $use->{start} }
    return $use;
}

sub model_writer { my $d = model_in_use(@_); return $d ? $d->{id} : undef }

sub model_pending {
    my ($m, $p, $t) = @_;
    return grep { !$_->{cancelled} && $_->{start} > $t } @{ $m->{decisions}{$p} || [] };
}

sub model_state {
    my ($m, $id, $t) = @_;
    return 'removed' if $m->{removed}{$id};
    my $p = $m->{prefix_of}{$id};
    my $w = model_writer($m, $p, $t);
    return 'current' if defined $w && $w == $id;
    return 'staged' if grep { $_->{id} == $id } model_pending($m, $p, $t);
    return 'retired';
}

sub model_previous {
    my ($m, $p, $t) = @_;
    my $now = model_in_use($m, $p, $t) or return undef;
    my @started = model_started($m, $p, $t);
    my %made = map { ($started[$_] => $_) } 0 .. $#started;
    # In the order writers took them up: by start, then as made.
    my @before = sort { $a->{start} <=> $b->{start} || $made{$a} <=> $made{$b} }
                 grep { $_ != $now && $_->{start} <= $now->{start} } @started;
    for my $d (reverse @before) {
        next if $d->{id} == $now->{id} || $m->{removed}{ $d->{id} };
        return $d->{id};
    }
    return undef;
}

sub model_decide {
    my ($m, $p, $id, $start, $t) = @_;
    $_->{cancelled} = 1 for $start <= $t ? model_pending($m, $p, $t) : ();
    push @{ $m->{decisions}{$p} }, { id => $id, start => $start };
    push @{ $m->{ids} }, $id unless $m->{prefix_of}{$id};
    $m->{prefix_of}{$id} = $p;
    return;
}

# ---- the operations -----------------------------------------------------------------

# A random operation, in terms that do not depend on the set (so that a
# sequence with a step dropped still runs): the choices are resolved
# against the model when the step runs.
sub random_op {
    my $r = rand;
    my $stage = rand() < 0.4 ? 0 : 1 + int rand 40;
    return { op => 'train', stage => $stage, if_better => rand() < 0.5 ? 1 : 0,
             outcomes => [ map { rand } @PREFIXES ] } if $r < 0.30;
    return { op => 'rollback', prefix => int rand @PREFIXES, stage => $stage,
             to => rand() < 0.3 ? rand : undef } if $r < 0.52;
    return { op => 'prune' } if $r < 0.58;
    return { op => 'clock', seconds => rand() < 0.5 ? 1 + int rand 10 : 'next', offset => int(rand 3) - 1 }
        if $r < 0.85;
    return { op => 'old_write' } if $r < 0.91;
    return { op => 'ship' };
}

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
    my %run = (%ctx, dir => "$tmp/set", host => "$tmp/host", model => model_new(), host_model => undef,
               writers => {}, host_writers => {}, dictionary => 0);
    local $NOW = 2_000_000_000;
    local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $NOW };
    local $SIG{__WARN__} = sub { push @{ $run{warnings} }, $_[0] unless $_[0] =~ /matches no dictionary/ };
    my $step = 0;
    for my $op (@$ops) {
        $run{step} = ++$step;
        my $why = eval { step(\%run, $op) || check(\%run) };
        # A command takes time: the next one starts at least a second later
        # (two changes of one prefix within a second are ordered by their
        # place in the manifest, which the model does not know).
        $NOW += 1 unless $op->{op} eq 'clock';
        $why = "died: $@" unless defined $why || $@ eq '';
        $why = 'warned: ' . join '', @{ $run{warnings} } if !defined $why && $run{warnings};
        return { step => $step, why => $why } if defined $why;
    }
    return undef;
}

# Does $op; returns why the outputs disagree with the model, or undef.
sub step {
    my ($run, $op) = @_;
    my $m = $run->{model};
    my $dir = $run->{dir};
    if ($op->{op} eq 'train') {
        my $set = -e "$dir/manifest" ? $SET->read($dir) : $SET->create($dir);
        my $starts = staged_from($op->{stage});
        my (@decisions, %outcome);
        for my $i (0 .. $#PREFIXES) {
            my $p = $PREFIXES[$i];
            my $writer = model_writer($m, $p, $starts);
            if ($op->{if_better}) {
                # What a new dictionary is measured against (decide's question).
                my $c = $set->current($p, at => $starts);
                my $got = $c ? $c->{id} : undef;
                return "train --if-better: $p is measured against " . _id($got) . ', the model says ' . _id($writer)
                    if _id($got) ne _id($writer);
            }
            my $outcome = defined $writer ? ($op->{outcomes}[$i] < 0.5 ? 'replace' : 'keep')
                                          : ($op->{outcomes}[$i] < 0.7 ? 'add' : 'none');
            $outcome{$p} = $outcome;
            push @decisions, _decision($run, $p, $outcome);
        }
        my $plan = { prefixes => \@decisions, sampled => { dictionary_ids => {} } };
        my $from = write_plan($set, $plan, stage => $op->{stage},
                              fallback => { method => 'zstd', level => 3 });
        my @added = grep { $_->{entry} } @decisions;
        return 'train: said it added from ' . _id($from) . ' with nothing added' if defined $from && !@added;
        for my $d (@added) {
            my $want = $op->{stage} > 0 ? 'staged' : 'current';
            return "train: $d->{set_prefix} added as $d->{state}, the model says $want" if $d->{state} ne $want;
            my $start = $NOW;
            if ($op->{stage} > 0) {
                $start = _epoch($from);
                return "train --stage $op->{stage} at $NOW: current from $from, not $op->{stage} s after the write"
                    unless $start >= $NOW + $op->{stage} && $start <= $NOW + $op->{stage} + 2;
                return "train: the entry says $d->{entry}{current_from}, the output $from"
                    if $d->{entry}{current_from} ne $from;
            }
            model_decide($m, $d->{set_prefix}, $d->{entry}{id}, $start, $NOW);
        }
        _start_following($run) unless $run->{following};
        return undef;
    }
    if ($op->{op} eq 'rollback') {
        return undef unless -e "$dir/manifest";
        my $p = $PREFIXES[ $op->{prefix} ];
        my @mine = grep { $m->{prefix_of}{$_} eq $p } @{ $m->{ids} };
        my $to = defined $op->{to} && @{ $m->{ids} } ? $m->{ids}[ int($op->{to} * @{ $m->{ids} }) ] : undef;
        my $writer = model_writer($m, $p, $NOW);
        my @pending = model_pending($m, $p, $NOW);
        my ($target, $refused);
        if (!@mine) { $refused = 'no dictionary' }
        elsif (defined $to) {
            $refused = 'another prefix' if $m->{prefix_of}{$to} ne $p;
            $refused ||= 'removed' if $m->{removed}{$to};
            $refused ||= 'current already' if defined $writer && $to == $writer && !@pending;
            $target = $to;
        }
        elsif (@pending && defined $writer) { $target = $writer }
        else {
            $target = model_previous($m, $p, $NOW);
            $refused = 'nothing to go back to' unless defined $target;
        }
        my $out = eval { rollback_set(dir => $dir, prefix => $p, stage => $op->{stage},
                                      (defined $to ? (to => $to) : ())) };
        my $err = $@;
        if ($refused) {
            return "rollback $p" . (defined $to ? " --to $to" : '') . ": the model refuses ($refused), it did not"
                if $out;
            return undef;
        }
        return "rollback $p" . (defined $to ? " --to $to" : '') . ": refused ($err), the model goes to $target"
            unless $out;
        return "rollback $p: went to $out->{to}, the model to $target" if $out->{to} != $target;
        return "rollback $p: from " . _id($out->{from}) . ', the model from ' . _id($writer)
            if _id($out->{from}) ne _id($writer);
        my @cancel = sort { $a <=> $b } map { $_->{id} } grep { $_->{id} != $target } @pending;
        my %seen;
        @cancel = grep { !$seen{$_}++ } @cancel;
        return "rollback $p: cancelled [@{ $out->{cancelled} }], the model [@cancel]"
            if "@{[ sort { $a <=> $b } @{ $out->{cancelled} } ]}" ne "@cancel";
        if (defined $writer && $target == $writer) {
            $_->{cancelled} = 1 for @pending;
            return undef;
        }
        my $start = $NOW;
        if ($op->{stage} > 0) {
            $start = _epoch($out->{current_from});
            return "rollback --stage $op->{stage} at $NOW: current from $out->{current_from}"
                unless $start >= $NOW + $op->{stage} && $start <= $NOW + $op->{stage} + 2;
        }
        $_->{cancelled} = 1 for @pending;
        model_decide($m, $p, $target, $start, $NOW);
        return undef;
    }
    if ($op->{op} eq 'prune') {
        return undef unless -e "$dir/manifest";
        my $source = Cache::Memcached::RustXS::Dict::Files->read([ $run->{empty_dump} ]);
        my $out = prune_set(dir => $dir, source => $source, delimiter => ':', sample => 10, retired_for => 0);
        my @want = sort { $a <=> $b } grep { model_state($m, $_, $NOW) eq 'retired' } @{ $m->{ids} };
        my @got = sort { $a <=> $b } @{ $out->{removed} };
        return "prune: removed [@got], the model [@want]" if "@got" ne "@want";
        $m->{removed}{$_} = 1 for @want;
        return undef;
    }
    if ($op->{op} eq 'clock') {
        my $by = $op->{seconds};
        if ($by eq 'next') {
            my ($next) = sort { $a <=> $b } map { $_->{start} } map { model_pending($m, $_, $NOW) } @PREFIXES;
            $by = defined $next ? $next - $NOW + $op->{offset} : 1;
            $by = 1 if $by < 1;
        }
        $NOW += $by;
        return undef;
    }
    if ($op->{op} eq 'old_write') {
        return undef unless -e "$dir/manifest";
        $OLD->read($dir)->write;    # 0.101 settles at its time, then writes
        return undef;
    }
    if ($op->{op} eq 'ship') {
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
        $run->{host_model} = model_clone($m);
        unless (%{ $run->{host_writers} }) {
            load_dictionaries($run->{host}, rescan_interval => 0);
            $run->{host_writers}{$_} = compress_methods(dictionaries => $run->{host}, prefix => $_, rescan_interval => 0)
                for @PREFIXES;
        }
        return undef;
    }
    die "unknown operation $op->{op}\n";
}

# The admin folder and, once shipped, the host's, against the model.
sub check {
    my ($run) = @_;
    return undef unless -e "$run->{dir}/manifest";
    my $why = check_folder($run, $run->{dir}, $run->{model}, $run->{writers}, 'admin');
    return $why if defined $why || !$run->{host_model};
    return check_folder($run, $run->{host}, $run->{host_model}, $run->{host_writers}, 'host');
}

sub check_folder {
    my ($run, $dir, $m, $writers, $where) = @_;
    my $set = $SET->read($dir);
    my %state = map { ($_->{entry}{id} => $_->{state}) } $set->schedule;
    my %listed = map { ($_->{id} => $_->{state}) } @{ list_set(dir => $dir)->{dictionaries} };
    my $old = $OLD->read($dir);
    my %in_set = map { ($_->{id} => 1) } $set->for_readers;
    for my $id (@{ $m->{ids} }) {
        my $want = model_state($m, $id, $NOW);
        return "$where at $NOW: dictionary $id is " . _id($state{$id}) . ", the model says $want"
            if _id($state{$id}) ne $want;
        return "$where at $NOW: list says dictionary $id is " . _id($listed{$id}) . ", the model says $want"
            if _id($listed{$id}) ne $want;
    }
    for my $p (@PREFIXES) {
        my $want = model_writer($m, $p, $NOW);
        my $c = $set->current($p);
        return "$where at $NOW: $p writes with " . _id($c && $c->{id}) . ', the model says ' . _id($want)
            if _id($c && $c->{id}) ne _id($want);
        my $o = $old->current($p, at => $NOW);
        return "$where at $NOW: 0.101 reads $p as writing with " . _id($o && $o->{id}) . ', the model says ' . _id($want)
            if _id($o && $o->{id}) ne _id($want);
        # A writer of one prefix a step, in turn (each reads the folder).
        next unless $p eq $PREFIXES[ $run->{step} % @PREFIXES ];
        my $w = $writers->{$p} or next;
        my $value = $run->{values}{$p};
        my ($frame, $back) = ('', '');
        $w->[0]->(\$value, \$frame) or return "$where at $NOW: the $p writer declined";
        my $used = frame_dictionary_id($frame);
        return "$where at $NOW: the $p writer wrote with " . _id($used) . ', the model says ' . _id($want || 0)
            if $used != ($want || 0);
        return "$where at $NOW: the $p writer wrote with dictionary $used, which a reader holding the set lacks"
            if $used && (!$in_set{$used} || $m->{removed}{$used});
        $w->[1]->(\$frame, \$back) && $back eq $value or return "$where at $NOW: the reader cannot read the $p value";
    }
    return undef;
}

# ---- helpers ---------------------------------------------------------------------

sub _start_following {
    my ($run) = @_;
    load_dictionaries($run->{dir}, rescan_interval => 0);
    $run->{writers}{$_} = compress_methods(dictionaries => $run->{dir}, prefix => $_, rescan_interval => 0)
        for @PREFIXES;
    $run->{following} = 1;
    return;
}

# A decision as decide_set makes it, with one of the pre-trained dictionaries.
sub _decision {
    my ($run, $p, $outcome) = @_;
    my $dicts = $run->{dictionaries};
    my $bytes = $dicts->[ $run->{dictionary}++ % @$dicts ];
    return { set_prefix => $p, outcome => $outcome, group => { prefix => $p, pairs => [] },
             tuned => { dictionary => $bytes, held_out_bytes => 1000, samples => 10,
                        choice => { level => 3, bytes => 500, memory => 1000, method => 'samples', size => length $bytes },
                        baseline => { memGzip => { memory => 2000 } } } };
}

sub _id { defined $_[0] ? $_[0] : 'none' }

sub _epoch { Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest::epoch_of($_[0]) }

# Runs $sequences random sequences of $steps steps from $seed; returns
# undef or the first failure, shrunk.
sub check_sequences {
    my (%opt) = @_;
    my $tmp = File::Temp->newdir;
    my $empty = "$tmp/empty.dump";
    open my $fh, '>', $empty or die "$empty: $!";
    print {$fh} "END\r\n";
    close $fh or die "$empty: $!";
    my %ctx = (dictionaries => $opt{dictionaries}, values => $opt{values}, empty_dump => $empty);
    for my $n (0 .. $opt{sequences} - 1) {
        my $seed = $opt{seed} + $n;
        srand $seed;
        my @ops = map { random_op() } 1 .. $opt{steps};
        my $failed = run_sequence(\@ops, %ctx) or next;
        my @short = @ops[ 0 .. $failed->{step} - 1 ];
        my $why = $failed->{why};
        DROP: while (1) {
            for my $i (0 .. $#short) {
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
