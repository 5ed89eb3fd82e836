package Cache::Memcached::RustXS::Dict::SetTrainer;

use strict;
use warnings;

use Exporter 5.57 'import';
use File::Spec ();

use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Zstd::DictionarySet ();
use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest qw(manifest_date);
use Cache::Memcached::RustXS::Zstd::DictionarySet::State qw(now staged_start);
use Cache::Memcached::RustXS::Zlib ();
use Cache::Memcached::RustXS::Dict qw(round fail load_dictionary_bytes);
use Cache::Memcached::RustXS::Dict::Sample qw(sample_source);
use Cache::Memcached::RustXS::Dict::Report qw(shown);
use Cache::Memcached::RustXS::Dict::Rollout ();
use Cache::Memcached::RustXS::Dict::Prune qw(read_set);
use Cache::Memcached::RustXS::Dict::Workers ();
use Cache::Memcached::RustXS::Dict::Tune qw(tune tune_fallback dictionary_memory stored_memory worth_a_dictionary);

our $VERSION = '1.000';

our @EXPORT_OK = qw(train_all report_set decide decide_set pool_shares forecast_shares whole_cache_samples write_plan
                    staged_from);

# The whole-cache pool holds at most this many times --sample values.
our $POOL_SAMPLES = 4;

# report --dictionaries forecasts settings from at most this many times --sample values.
our $FORECAST_SAMPLES = 20;

our $DEFAULT_IF_BETTER = 5;    # percent less memory a new dictionary must take

# The ID candidates' frames name while they are measured: the smallest that
# DictionarySet's new_id draws, which takes as many bytes in a frame (4) as
# any it draws.
my $MEASURED_ID = 65536;

# What train --all does with a prefix, and report --dictionaries names it.
my %ACTION  = (add => 'added', replace => 'replaced', keep => 'kept', none => 'none');
my %VERDICT = (add => 'train', replace => 'retrain', keep => 'current', none => 'the fallback');

# ---- the decision -----------------------------------------------------------------

# The one decision for a prefix, or the whole cache (THE DECISION in the
# POD). The current dictionary is the one writers use at $opt{at}: train
# --all asks for when what it adds would start, so that a dictionary
# staged before is what a new one must beat.
sub decide {
    my (%opt) = @_;
    my $set = $opt{set};
    my $current = defined $opt{set_prefix}
        ? $set->current($opt{set_prefix}, (defined $opt{at} ? (at => $opt{at}) : ())) : undef;
    my %decision = (group => $opt{group}, set_prefix => $opt{set_prefix}, pairs => scalar @{ $opt{pairs} },
                    ($current ? (current => { %$current }) : ()));
    my $refuse = sub {
        @decision{qw(outcome why)} = ($current ? 'keep' : 'none', $_[0]);
        return \%decision;
    };
    return $refuse->($opt{no_dictionary}) if defined $opt{no_dictionary};
    return $refuse->('no values sampled') unless @{ $opt{pairs} };
    my $tuned = tune(%{ $opt{tuning} }, samples => $opt{pairs}, keys => $opt{keys}, id => $opt{id},
                     progress => $opt{progress});
    $decision{tuned} = $tuned;
    if ($current && @{ $tuned->{held} }) {
        my $measured = dictionary_memory($opt{tuning}{memory}, $tuned->{held}, $set->dictionary_bytes($current->{id}),
                                         $current->{level});
        $decision{current} = { %$current, %$measured };
    }
    my ($worth, $why) = worth_a_dictionary($tuned, $opt{keys});
    return $refuse->($why) unless $worth;
    return $refuse->("a new dictionary would be the current one (ID $current->{id}) again")
        if $current && _same_dictionary($tuned, $set->dictionary_bytes($current->{id}), $current->{level});
    if ($current && $decision{current}{memory}) {
        my $gain = 100 * (1 - $tuned->{choice}{memory} / $decision{current}{memory});
        $decision{gain_over_current} = round($gain, 1);
        return $refuse->(sprintf 'a new dictionary would take %.1f %% %s memory than the current one (ID %d); '
                                . '--if-better is %s %%', abs $gain, ($gain < 0 ? 'more' : 'less'), $current->{id},
                                  $opt{if_better}) if $gain < $opt{if_better};
    }
    $decision{outcome} = $current ? 'replace' : 'add';
    return \%decision;
}

# Whether the tuned dictionary is the current one but for its ID (the
# same values trained again): the rest of a zstd dictionary follows from
# its samples and parameters, the ID is drawn at random. Its measure on the
# held-out values would compare two trainings of unequal data (the current
# one saw the held-out values), so a retrain on unchanged values keeps it.
my $DICTIONARY_ID_END = 8;    # zstd's magic number and the dictionary ID

sub _same_dictionary {
    my ($tuned, $current_bytes, $current_level) = @_;
    return 0 unless defined $tuned->{dictionary} && defined $current_bytes && $tuned->{choice}
                 && $tuned->{choice}{level} == $current_level;
    return length $tuned->{dictionary} == length $current_bytes
        && substr($tuned->{dictionary}, $DICTIONARY_ID_END) eq substr($current_bytes, $DICTIONARY_ID_END);
}

# Samples the source and decides every prefix of it, then the whole cache
# (unless some prefixes only were asked for: their pool would not be the
# cache's). What train --all and report --dictionaries share. A prefix's
# values are fetched here and decided in a process of its own while the
# next prefix is fetched; what stays here of them is their share of the
# whole-cache pool, at most $POOL_SAMPLES times --sample values in all.
sub decide_set {
    my ($set, %opt) = @_;
    my $progress = $opt{progress} || sub { };
    my $if_better = defined $opt{if_better} ? $opt{if_better} : $DEFAULT_IF_BETTER;
    my %tuning = (memory => $opt{memory}, map { ($_ => $opt{$_}) } grep { defined $opt{$_} }
                  qw(max_size sizes levels methods compress_time decompress_time));
    # The keys a prefix holds, as the tuner counts them: a server's count;
    # none for files, which are a sample, not the cache.
    my $counts_keys = $opt{source}->counts_keys;
    # Frames are measured naming an ID of the size the set's new ones take
    # in each frame (the 4 bytes of a random ID, new_id's).
    my %common = (set => $set, tuning => \%tuning, id => $MEASURED_ID, if_better => $if_better,
                  at => $opt{at});
    my $whole_cache = !($opt{prefixes} && @{ $opt{prefixes} });
    my (@prefixes, $shares, $forecast_shares, @pooled);
    my $workers = Cache::Memcached::RustXS::Dict::Workers->new(jobs => $opt{jobs});
    my $counter = $opt{counter};
    my $each_group = sub {
        my ($g, $pairs, $i, $groups) = @_;
        if (!$shares) {    # the listing is whole: every prefix's share is known
            my @counts = map { +{ prefix => $_->{prefix}, keys => $_->{keys}, values => scalar @{ $_->{sample} } } }
                         @$groups;
            $shares = pool_shares(\@counts, defined $opt{sample} ? (max => $POOL_SAMPLES * $opt{sample}) : ());
            $forecast_shares = forecast_shares(\@counts, $FORECAST_SAMPLES * $opt{sample})
                if $opt{written_items} && defined $opt{sample};
            $counter->start_count(scalar @$groups, 'prefixes tuned') if $counter;
        }
        $pooled[$i] = _take_evenly($pairs, $shares->{ $g->{prefix} } || 0);
        $workers->run(sub {
            my $decision = decide(
                %common, group => $g, pairs => $pairs, keys => $counts_keys ? $g->{keys} : undef,
                set_prefix => $g->{delimited} ? $g->{prefix} . $opt{delimiter} : undef,
                no_dictionary => $g->{delimited} ? undef
                               : "keys without the delimiter '$opt{delimiter}' have no prefix: they get the fallback");
            $decision->{written_items} = $opt{written_items}->($decision, !$forecast_shares ? $pairs
                : [ map { $_->[1] } @{ _take_evenly($pairs, $forecast_shares->{ $g->{prefix} } || 0) } ])
                if $opt{written_items};
            return _portable($decision, $opt{keep_dictionary});
        }, sub {
            my ($decision) = @_;
            $decision->{group} = $g;
            $prefixes[$i] = $decision;
            $counter->count_done('prefix ' . shown($g->{prefix}) . ': ' . ($decision->{why} || $decision->{outcome}),
                                 $workers->running) if $counter;
        });
    };
    my $sampled = sample_source($opt{source}, delimiter => $opt{delimiter}, per_prefix => $opt{sample},
                                prefixes => $opt{prefixes}, max_prefixes => $opt{max_prefixes}, progress => $progress,
                                listing_progress => $opt{listing_progress}, each_group => $each_group);
    $workers->wait_all;
    my $whole;
    if ($whole_cache) {
        my %count = map { ($prefixes[$_]{group}{prefix} => scalar @{ $pooled[$_] }) }
                    grep { $prefixes[$_]{group}{keys} && $prefixes[$_]{pairs} } 0 .. $#prefixes;
        my $pool = _interleave(@pooled);
        my $keys = 0;
        $keys += $_->{keys} for @{ $sampled->{groups} };
        $whole = decide(%common, set_prefix => '', group => { prefix => '', keys => $keys }, pairs => $pool,
                        keys => $counts_keys ? $keys : undef,
                        progress => sub { $progress->("the whole cache: $_[0]") });
        @$whole{qw(whole_cache shares)} = (1, \%count);
    }
    return { sampled => $sampled, prefixes => \@prefixes, whole_cache => $whole, if_better => $if_better,
             tuning => \%tuning, pooled => \@pooled };
}

# A decision as it comes back from its process: data only, and only what
# the output and the set need (the candidates' dictionaries, the
# baselines' frames and codecs, the held-out values go; the dictionary
# the set would add stays only when it is to be written).
sub _portable {
    my ($decision, $keep_dictionary) = @_;
    delete $decision->{group};
    my $tuned = $decision->{tuned} or return $decision;
    delete $tuned->{held};
    delete $tuned->{dictionary} unless $keep_dictionary;
    if (my $baseline = $tuned->{baseline}) {
        delete $baseline->{frames};
        delete $_->{codec} for grep { ref eq 'HASH' } values %$baseline;
    }
    delete $_->{dictionary} for @{ $tuned->{candidates} || [] };
    return $decision;
}

# ---- train --all ------------------------------------------------------------------

sub train_all {
    my (%opt) = @_;
    my $dir = $opt{dir};
    my $progress = $opt{progress} || sub { };
    my $stage = defined $opt{stage} ? $opt{stage} : $Cache::Memcached::RustXS::Dict::Rollout::DEFAULT_STAGE;
    my $manifest = File::Spec->catfile($dir, 'manifest');
    my @orphans = -e $manifest ? () : sort glob File::Spec->catfile(quotemeta $dir, '*.dict');
    # Dictionaries without their manifest: a set whose manifest was lost.
    # A new set would leave them behind, and values may name their IDs.
    fail("train --all: $dir holds dictionaries (" . join(', ', map { (File::Spec->splitpath($_))[2] } @orphans)
         . ") but no manifest ($manifest is missing): refused, nothing changed. To start over, give an empty "
         . 'folder, or remove those files; to keep the set, restore its manifest') if @orphans;
    my $set = -e $manifest
        ? read_set($dir, to_change => 1)
        : Cache::Memcached::RustXS::Zstd::DictionarySet->create($dir);
    _load_for_reading($set);
    my $plan = decide_set($set, %opt, at => staged_from($stage), keep_dictionary => 1);
    # The fallback is measured on the pooled values: each prefix's share,
    # in proportion to its keys.
    my (@fallback_pool, @all_pairs);
    for my $i (0 .. $#{ $plan->{prefixes} }) {
        my $d = $plan->{prefixes}[$i];
        my @pairs = map { $_->[1] } @{ $plan->{pooled}[$i] };
        push @all_pairs, @pairs;
        push @fallback_pool, @pairs if $d->{outcome} eq 'none';
    }
    $progress->('the fallback');
    my $measured = @fallback_pool ? \@fallback_pool : \@all_pairs;
    my %limits = map { ($_ => $plan->{tuning}{$_}) } grep { defined $plan->{tuning}{$_} } qw(compress_time decompress_time);
    my $fallback = tune_fallback(%limits, samples => $measured, memory => $opt{memory});
    $fallback->{measured_on} = @fallback_pool ? 'keys without a dictionary' : 'every sampled key';
    my $w = $plan->{whole_cache};
    if ($w && ($w->{outcome} eq 'add' || $w->{outcome} eq 'replace')) {
        $w->{other_keys} = _other_keys($opt{memory}, $w->{tuned}, $fallback, $measured);
    }
    my $from = write_plan($set, $plan, stage => $stage, fallback => $fallback, delimiter => $opt{delimiter});
    return { command => 'train --all', dir => $dir, set => $set, listing => $plan->{sampled}{listing},
             prefixes => $plan->{prefixes}, fallback => $fallback, if_better => $plan->{if_better},
             memory => $opt{memory}, whole_cache => $plan->{whole_cache},
             source_spec => ($opt{source}->can('spec') ? $opt{source}->spec : undef),
             dictionary_ids => $plan->{sampled}{dictionary_ids}, stage => $stage,
             (defined $from ? (current_from => $from) : ()) };
}

# Loads the dictionaries of $set that readers load, so that values the set
# wrote decode: a node is retrained on what its writers stored with it.
# Not prepared for writing (train --all writes nothing with them). One
# that cannot be read (its file gone or changed) is left out: the values
# naming it are skipped and counted, as values naming no loaded dictionary
# are.
sub _load_for_reading {
    my ($set) = @_;
    for my $e ($set->for_readers) {
        my $bytes = eval { $set->dictionary_bytes($e->{id}) };
        eval { load_dictionary_bytes($bytes) } if defined $bytes;
    }
    return;
}

# The moment a dictionary train --all adds with $stage would start, at the
# earliest (the set is written after the tuning): what it must beat is
# what writers use then, a dictionary staged before included.
sub staged_from {
    my ($stage) = @_;
    return $stage > 0 ? staged_start(now(), $stage) : now();
}

# Adds to $set what the decisions of $plan (decide_set's) add or replace,
# with the fallback and the delimiter, and writes it: all the tuning is
# done, so that $stage counts from the write. Each added decision gets its
# action, its entry and its state (current or staged); returns when
# writers begin to use them, as the written set says (undef when nothing
# was added).
sub write_plan {
    my ($set, $plan, %opt) = @_;
    # Random IDs, none that a sampled stored value names.
    my %adding = (stage => $opt{stage},
                  avoid => [ sort { $a <=> $b } keys %{ $plan->{sampled}{dictionary_ids} || {} } ]);
    my @added;
    for my $d (@{ $plan->{prefixes} }, $plan->{whole_cache} || ()) {
        $d->{action} = $ACTION{ $d->{outcome} };
        next unless $d->{outcome} eq 'add' || $d->{outcome} eq 'replace';
        my @other = $d->{whole_cache} ? (other_keys => $d->{other_keys}{use} ? 1 : 0) : ();
        $d->{entry} = _add_dictionary($set, $d, %adding, @other);
        push @added, $d;
    }
    if (my $f = $opt{fallback}) {
        $set->set_fallback(map { ($_ => $f->{$_}) } grep { defined $f->{$_} } qw(method level savings samples));
    }
    $set->set_delimiter($opt{delimiter}) if defined $opt{delimiter} && length $opt{delimiter};
    $set->write;
    my $written = now();
    my %row = map { ($_->{entry}{id} => $_) } $set->schedule(at => $written);
    for my $d (@added) {
        $d->{state} = $row{ $d->{entry}{id} }{state};    # current or staged
        $d->{entry} = $set->entry($d->{entry}{id});
    }
    return undef unless @added;
    my ($from) = map { $row{ $_->{entry}{id} }{since} } grep { $_->{state} eq 'staged' } @added;
    return defined $from ? $from : manifest_date($written);
}

# The one place where train --all gives a dictionary its ID and adds it to
# the set: the tuner's choice for the decided prefix, under a random ID
# that is not among the IDs of avoid (those sampled stored values name),
# staged stage seconds after the set is written (0: current at once).
sub _add_dictionary {
    my ($set, $decision, %opt) = @_;
    my ($avoid, $stage) = delete @opt{qw(avoid stage)};
    my $tuned = $decision->{tuned};
    my $c = $tuned->{choice};
    return $set->add(
        prefix => $decision->{set_prefix}, dictionary => $tuned->{dictionary}, level => $c->{level},
        id => $set->new_id(avoid => $avoid), stage => $stage,
        savings => round(100 * (1 - $c->{bytes} / $tuned->{held_out_bytes}), 1),
        samples => $tuned->{samples},
        memory_savings => round(100 * (1 - $c->{memory} / $tuned->{baseline}{memGzip}{memory}), 1),
        method => $c->{method}, size_asked => $c->{size},
        ($c->{method} eq 'samples' ? () : (k => $c->{k}, d => $c->{d})),
        %opt,
    );
}

# ---- the whole-cache entry ---------------------------------------------------------

# How many values each prefix gives the whole-cache pool (the POD says
# how the shares are made).
sub pool_shares {
    my ($groups, %opt) = @_;
    my @sampled = grep { $_->{keys} && $_->{values} } @$groups;
    return {} unless @sampled;
    my $total = 0;
    $total += $_->{keys} for @sampled;
    my ($exact) = sort { $a <=> $b } map { $_->{values} / $_->{keys} } @sampled;
    my ($most) = sort { $b <=> $a } map { $_->{values} } @sampled;
    my $scale = $exact * $total >= $most ? $exact : $most / $total;
    return _bounded_shares(\@sampled, $opt{max}, $total) if defined $opt{max} && $scale * $total > $opt{max};
    my %count;
    for my $g (@sampled) {
        my $n = int($scale * $g->{keys} + 0.5);
        $count{ $g->{prefix} } = $n > $g->{values} ? $g->{values} : $n;
    }
    return \%count;
}

# The values of each prefix the settings forecast is made from.
sub forecast_shares {
    my ($groups, $max) = @_;
    my @sampled = grep { $_->{keys} && $_->{values} } @$groups;
    my ($values, $keys) = (0, 0);
    ($values, $keys) = ($values + $_->{values}, $keys + $_->{keys}) for @sampled;
    return $values > $max ? _bounded_shares(\@sampled, $max, $keys) : undef;
}

# Exactly max values shared by keys (each share rounded down, the values
# left over to the largest remainders, the larger prefix first at a tie),
# no prefix giving more than it has: rounding each share to the nearest
# would overshoot the bound.
sub _bounded_shares {
    my ($sampled, $max, $total) = @_;
    my (%count, @remainder);
    my $left = $max;
    for my $g (@$sampled) {
        my $exact = $max * $g->{keys} / $total;
        my $n = int $exact;
        $n = $g->{values} if $n > $g->{values};
        $count{ $g->{prefix} } = $n;
        $left -= $n;
        push @remainder, [ $exact - $n, $g ] if $n < $g->{values};
    }
    for my $r (sort { $b->[0] <=> $a->[0] || $b->[1]{keys} <=> $a->[1]{keys} } @remainder) {
        last if $left <= 0;
        next if $r->[0] <= 0;
        $count{ $r->[1]{prefix} }++;
        $left--;
    }
    return \%count;
}

# $n of the pairs, taken evenly, each with its place in the pool (its
# position among the prefix's, from 0 to 1).
sub _take_evenly {
    my ($pairs, $n) = @_;
    $n = @$pairs if $n > @$pairs;
    return [ map { [ ($_ + 0.5) / $n, $pairs->[ int(($_ + 0.5) * @$pairs / $n) ] ] } 0 .. $n - 1 ];
}

# The pool: every prefix's taken pairs interleaved by their places (a
# prefix's values spread over the pool), the earlier prefix first at a tie.
sub _interleave {
    my @lists = @_;
    my @placed;
    for my $order (0 .. $#lists) {
        push @placed, map { [ $_->[0], $order, $_->[1] ] } @{ $lists[$order] };
    }
    return [ map { $_->[2] } sort { $a->[0] <=> $b->[0] || $a->[1] <=> $b->[1] } @placed ];
}

# The pool and each prefix's count, from groups that hold their pairs:
# what decide_set builds as the prefixes are fetched, in one call.
sub whole_cache_samples {
    my ($groups, %opt) = @_;
    my @sampled = grep { $_->{keys} && @{ $_->{pairs} } } @$groups;
    my $count = pool_shares([ map { +{ prefix => $_->{prefix}, keys => $_->{keys}, values => scalar @{ $_->{pairs} } } }
                              @sampled ], %opt);
    return (_interleave(map { _take_evenly($_->{pairs}, $count->{ $_->{prefix} }) } @sampled), $count);
}

# Whether the whole-cache choice stores the keys the fallback is for in
# less memory than the fallback: measured on the held-out pooled values of
# those keys (all the fallback's values when none was held out), with the
# candidate dictionary trained without them.
sub _other_keys {
    my ($memory, $tuned, $fallback, $fallback_pool) = @_;
    my %theirs = map { ($_->[0] => 1) } @$fallback_pool;
    my @held = grep { $theirs{ $_->[0] } } @{ $tuned->{held} };
    my $of = $fallback->{measured_on} || 'the sample';
    my $on = @held ? "held-out values of $of" : "every value of $of";
    @held = @$fallback_pool unless @held;
    my $c = $tuned->{choice};
    my $with_dictionary = dictionary_memory($memory, \@held, $c->{dictionary}, $c->{level});
    my @values = map { $_->[1] } @held;
    my $sizes = $fallback->{method} eq 'zstd'
        ? Cache::Memcached::RustXS::Zstd::frame_sizes(\@values, level => $fallback->{level})
        : do { local $Cache::Memcached::RustXS::Zlib::Level = $fallback->{level};
               [ map { length Cache::Memcached::RustXS::Zlib::memGzip($_) } @values ] };
    my $with_fallback = stored_memory($memory, \@held, $sizes);
    return { use => ($with_dictionary->{memory} < $with_fallback->{memory} ? 1 : 0), values => scalar @held,
             measured_on => $on, memory => $with_dictionary->{memory}, fallback_memory => $with_fallback->{memory} };
}

# ---- report --dictionaries ---------------------------------------------------------

sub report_set {
    my (%opt) = @_;
    my $dir = $opt{dir};
    my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
    # Stored values made with the set's dictionaries decode. Prepared for
    # writing only where the forecast writes with one: in a prefix's own
    # process, with that prefix's (written_items).
    local $Cache::Memcached::RustXS::Zstd::PREPARE_ON_LOAD = 0;
    Cache::Memcached::RustXS::Zstd::load_dictionaries($dir);
    my $plan = decide_set($set, %opt);
    my %sampled_prefix;
    for my $d (@{ $plan->{prefixes} }, $plan->{whole_cache} || ()) {
        $d->{verdict} = $d->{pairs} || !defined $d->{set_prefix} ? $VERDICT{ $d->{outcome} } : 'no values sampled';
        $sampled_prefix{ $d->{set_prefix} } = 1 if defined $d->{set_prefix};
    }
    # Prefixes the set has and the sample has not.
    my @unsampled = map { +{ set_prefix => $_, verdict => 'no keys sampled', current => $set->current($_) } }
                    grep { length && !$sampled_prefix{$_} } $set->prefixes;
    my $named = $plan->{sampled}{dictionary_ids};
    # Each dictionary with its state now (not as written: a staged one whose
    # time has come is current).
    my @dictionaries = map { +{ %{ $_->{entry} }, state => $_->{state}, named_by => $named->{ $_->{entry}{id} } || 0 } }
                       grep { $_->{state} ne 'removed' } $set->schedule;
    my %in_set = map { ($_->{id} => 1) } @dictionaries;
    my @strangers = map { +{ id => 0 + $_, named_by => $named->{$_} } }
                    grep { !$in_set{$_} } sort { $a <=> $b } keys %$named;
    return { command => 'report --dictionaries', dir => $dir, set => $set, listing => $plan->{sampled}{listing},
             prefixes => [ @{ $plan->{prefixes} }, @unsampled ], dictionaries => \@dictionaries,
             other_ids => \@strangers, if_better => $plan->{if_better}, memory => $opt{memory},
             fallback => $set->fallback, whole_cache => $plan->{whole_cache} };
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::SetTrainer - cmrx-dict's dictionary sets: train every prefix worth a dictionary into a set, or say what that would do

=head1 SYNOPSIS

    use File::Temp ();
    use Cache::Memcached::RustXS::Dict::SlabModel;
    use Cache::Memcached::RustXS::Dict::Files;
    use Cache::Memcached::RustXS::Dict::SetTrainer qw(train_all report_set);
    use Cache::Memcached::RustXS::Dict::Report::Dictionaries qw(print_train_all);

    # Values as a memcached get response (a file of them, or a live server:
    # Cache::Memcached::RustXS::Dict::NodeReader->connect('127.0.0.1:11211'))
    my $dump = File::Temp->new;
    for my $i (1 .. 300) {
        my $v = qq({"id":$i,"name":"user$i","plan":"free","tags":["a","b"],"visits":) . ($i * 7) . '}';
        print {$dump} "VALUE user:$i 0 " . length($v) . "\r\n$v\r\n";
    }
    print {$dump} "END\r\n";
    close $dump;

    my $tmp = File::Temp->newdir;
    my $dir = "$tmp/dictionaries";
    my %common = (source => Cache::Memcached::RustXS::Dict::Files->read(["$dump"]),
                  delimiter => ':', sample => 1000,
                  memory => Cache::Memcached::RustXS::Dict::SlabModel->new);
    # Without speed limits (0), so that tiny values like these get a
    # dictionary on any machine; the defaults keep each dictionary's
    # compression no slower than memGzip and its decompression faster than
    # our gzip, as measured in the run. stage => 0: current at once, as no
    # host has the set yet (by default what is added is staged an hour, so
    # that every reader has it before any writer uses it).
    my $trained = train_all(%common, dir => $dir, compress_time => 0, decompress_time => 0, stage => 0);
    print_train_all(\*STDOUT, $trained);

    my $report = report_set(%common, dir => $dir, compress_time => 0, decompress_time => 0);
    print "$_->{set_prefix}: $_->{verdict}\n" for @{ $report->{prefixes} };

=head1 DESCRIPTION

C<cmrx-dict train --all> and C<cmrx-dict report --dictionaries> (the
manual, F<cmrx-dict.pod>, describes both): one decision, made the same way
for every prefix of a source and for the whole cache, which C<train --all>
carries out on the set and C<report --dictionaries> reports. Values come
from a source: a L<Cache::Memcached::RustXS::Dict::NodeReader> or the values of
files, L<Cache::Memcached::RustXS::Dict::Files>. Keys are grouped by prefix
and sampled as L<Cache::Memcached::RustXS::Dict::Sample> does; each prefix
is tuned by L<Cache::Memcached::RustXS::Dict::Tune>, in the memory terms of
a L<Cache::Memcached::RustXS::Dict::SlabModel>; the set is a
L<Cache::Memcached::RustXS::Zstd::DictionarySet>. Printing the results is
L<Cache::Memcached::RustXS::Dict::Report::Dictionaries>'s.

=head1 THE DECISION

Per prefix (the group of keys before the delimiter, which the set holds
with the delimiter: C<user:>), and for the whole cache (the empty prefix,
its samples the pool of every group's, L</whole_cache_samples(\@groups, max =E<gt> $count)>):
a fresh dictionary is tuned on the sampled values
(L<Cache::Memcached::RustXS::Dict::Tune/"tune(%options)">, with the keys the source
counts: a server's, none for files), the set's current dictionary is
measured on the same held-out values, and the outcome is

=over 4

=item add

no current dictionary, and the fresh one is worth one
(L<Cache::Memcached::RustXS::Dict::Tune/worth_a_dictionary($tuned, $keys)>:
at least 5 % less memory than the best codec without one and, with the
keys counted, more memcached memory saved over them than its own bytes);

=item replace

the fresh one is worth one and takes at least C<if_better> % (5 by
default) less memory than the current one;

=item keep

the current one stays: the fresh one is not worth one, or not that much
better, or is the current one again (the same values trained again give the
same dictionary but for its ID), or no value was sampled;

=item none

no dictionary: not worth one, no value sampled, or keys without the
delimiter (which get the fallback, and are not tuned).

=back

C<train --all> adds the fresh dictionary for C<add> and C<replace>, staged
(the one before stays current until it starts, and is then retired, never
removed) and reports C<added>, C<replaced>,
C<kept> or C<none>; C<report --dictionaries> says C<train>, C<retrain>,
C<current> or C<the fallback> (C<no values sampled> when the sample had
none, C<no keys sampled> for a prefix of the set that no sampled key has).

=head1 FUNCTIONS

Exported on request.

=over 4

=item train_all(dir => $dir, source => $source, delimiter => ':', sample => 1000, memory => $model, if_better => 5, stage => 3600, max_size => 112640, sizes => \@sizes, levels => \@levels, methods => \@methods, compress_time => 1, decompress_time => 1, prefixes => \@prefixes, progress => sub { }, listing_progress => sub { })

Reads the set in C<$dir> (or makes a new one), decides every prefix of the
source and the whole cache (L</decide_set($set, %options)>), and adds the
chosen dictionary of each prefix that gets one, I<staged>: current from
C<stage> seconds after the set is written (by default
C<$Cache::Memcached::RustXS::Dict::Rollout::DEFAULT_STAGE>, 3600; 0: at
once; see L<Cache::Memcached::RustXS::Zstd::DictionarySet/"Staging and rolling back">).
Each prefix is decided against the dictionary writers will use at that
moment (one staged before, when it starts earlier), so that running it
again within the stage does not stage the same choice twice. Each
dictionary gets a random ID
(L<Cache::Memcached::RustXS::Zstd::DictionarySet/new_id>,
4 bytes in each frame) that no sampled stored value names, so that a set
made again from scratch never gives an ID that values in the cache name.
The fallback (what keys
without a dictionary get) is measured on the pooled values of the prefixes
left without one (on every pooled value when all have one). The whole-cache entry is
added with C<other_keys> 1 when its dictionary takes less memory than the
fallback on the held-out pooled values of the keys the fallback was
measured on (all the fallback's values when none was held out), else 0.
The delimiter is recorded on the set line, and the set is written. The
tuning options (C<max_size>, C<sizes>, C<levels>, C<methods>,
C<compress_time>, C<decompress_time>) are
L<Cache::Memcached::RustXS::Dict::Tune/"tune(%options)">'s.

Returns a hash reference: C<dir>, C<set>, C<listing>, C<prefixes> (per
prefix the decision, below, with C<action>: C<added>, C<replaced>,
C<kept>, C<none>; and C<entry>, the set's new entry), C<fallback>,
C<whole_cache> (the same for the whole-cache entry, with C<other_keys>
(C<use>, C<memory>, C<fallback_memory>, C<values>, C<measured_on>) when
it was added; undef with C<prefixes>), C<dictionary_ids> (C<< { id =>
count } >>: how many sampled stored values name each dictionary ID, none
of which an added dictionary has), C<stage> (seconds) and, when a
dictionary was added, C<current_from> (C<YYYY-MM-DDTHH:MM:SSZ>: when
writers begin to use the added dictionaries, as the written set says: at
least C<stage> seconds after the set was written, the tuning of every
prefix and of the whole cache done before); each decision that added a
dictionary has its C<state> after the set was written: C<staged> or
C<current>.

=item report_set(dir => $dir, ...)

The same options; nothing is written. Loads the set's dictionaries (so
values made with them decode), decides as C<train_all> would, and gives
each decision a C<verdict> (L</THE DECISION>). Returns C<dir>, C<set>,
C<listing>, C<prefixes> (the decisions, then the set's prefixes that no
sampled key has: C<set_prefix>, C<current>, C<verdict> C<no keys
sampled>), C<whole_cache> (undef with C<prefixes>), C<fallback> (the
set's), C<dictionaries> (per entry of the set, C<named_by>: how many
sampled stored values are frames naming its ID) and C<other_ids> (IDs
that sampled values name and the set does not have).

=item decide_set($set, %options)

What both share: the source sampled
(L<Cache::Memcached::RustXS::Dict::Sample/sample_source($source, delimiter =E<gt> ':', per_prefix =E<gt> 1000, prefixes =E<gt> \@prefixes, max_prefixes =E<gt> 1000, each_group =E<gt> sub { my ($group, $pairs, $index, $groups) = @_ }, progress =E<gt> sub { my ($what) = @_ }, listing_progress =E<gt> sub { })>)
one prefix after another, each prefix decided in a process of its own
while the next is fetched, C<jobs> at once
(L<Cache::Memcached::RustXS::Dict::Workers>; what comes back keeps no
candidate's dictionary, nor the held-out values, and the dictionary to
add only with C<keep_dictionary>, as C<train_all> asks), then
the whole cache unless C<prefixes> is given. What stays of a prefix's
values once it is fetched is its share of the whole-cache pool
(L</pool_shares(\@groups, max =E<gt> $count)>, at most
C<$POOL_SAMPLES> (4) times C<sample> values in all): the memory of the
command grows with C<sample> and C<jobs>, not with the number of
prefixes. C<written_items>: a function C<($decision, \@pairs)> run in
the prefix's process on its share of L</forecast_shares(\@groups, $max)>
(C<$FORECAST_SAMPLES>, 20, times C<sample>), its result kept as the
decision's C<written_items>. C<counter>: a
L<Cache::Memcached::RustXS::Dict::Progress> that counts the prefixes
decided and shows each one's outcome.
Frames are measured naming a 4-byte ID (65536), as the IDs the set's new
dictionaries get take in each frame. The option C<at> (epoch seconds;
now by default) is the moment whose current dictionaries the fresh ones
are measured against. Returns C<<
{ sampled, prefixes => \@decisions, whole_cache => $decision, if_better,
tuning, pooled } >> (C<pooled>: per decision, the pairs it gave the pool,
each as C<[$place, $pair]>).

=item decide(set => $set, set_prefix => 'user:', group => $group, pairs => \@pairs, keys => $count, tuning => \%tune_options, id => $id, if_better => 5, at => time, no_dictionary => $why, progress => sub { })

One decision (L</THE DECISION>), against the prefix's dictionary at the
moment C<at> (epoch seconds, now by default; a staged one once it starts):
C<< { outcome, why, group, set_prefix,
pairs (how many), tuned (tune's result), current (the set's entry, with
its memory and bytes on the held-out values), gain_over_current } >>.
C<set_prefix> undef (a group without the delimiter) or C<no_dictionary>
(why) decides C<none> without tuning.

=item write_plan($set, $plan, stage => 3600, fallback => $fallback, delimiter => ':')

The second half of C<train_all>, after all the tuning: adds what the
decisions of C<$plan> (C<decide_set>'s) add or replace, each under a random
ID (C<new_id>, avoiding the IDs sampled values name) and staged C<stage>
seconds after the set is written (0: at once); sets the fallback and the
delimiter; writes the set. Each added decision gets its C<action>, its
C<entry> as written and its C<state> (C<current> or C<staged>). Returns
when writers begin to use the added dictionaries, as the written set says
(undef when nothing was added).

=item staged_from($stage)

The earliest moment a dictionary that C<train_all> adds with C<$stage>
seconds would start (now with 0): what C<train_all> asks C<decide_set> to
measure a new dictionary against.

=item pool_shares(\@groups, max => $count)

How many values each prefix gives the pool the whole-cache entry is tuned
on: C<< { prefix => count } >>, from groups C<< { prefix, keys, values } >>
(C<keys>: the prefix's keys on the server, or its values in the files;
C<values>: how many it has). Each prefix gives values in proportion to its
keys, so that each pooled value stands for as many keys as any other. The
pool is the largest for which every prefix has enough values for its exact
share; when that is smaller than the largest prefix's values, it is made
that large and a prefix short of values gives all it has. When that pool
would hold more than C<max> values, it holds C<max>, shared by keys (each
share rounded down, the rest to the largest remainders), so that neither
its memory nor the whole cache's tuning grows with the number of
prefixes.

=item forecast_shares(\@groups, $max)

How many of each prefix's values the settings forecast is made from:
C<undef> (all) when the groups have at most C<$max> in all, else C<$max>
shared by keys as C<pool_shares> shares its bound.

=item whole_cache_samples(\@groups, max => $count)

The pool itself and each prefix's count, C<(\@pairs, { prefix =E<gt>
count })>, from groups that hold their pairs (C<< { prefix, keys, pairs
=> [ [$key, $value], ... ] } >>): each prefix's share
(C<pool_shares>) taken evenly from its pairs and interleaved with the
others' in order. C<decide_set> builds the same pool as the prefixes are
fetched.

=back

=head1 SEE ALSO

L<cmrx-dict>'s "train --all" and "report --dictionaries"; the tuning of
one prefix, L<Cache::Memcached::RustXS::Dict::Tune>; the set itself,
L<Cache::Memcached::RustXS::Zstd::DictionarySet>.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
