package Cache::Memcached::RustXS::Dict::Tune;

use strict;
use warnings;

use Exporter 5.57 'import';
use Carp ();
use Time::HiRes ();

use Compress::Zlib ();
use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Zlib ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Dict qw(sum_length round ratio held_out_split distinct_values load_dictionary_bytes @BASELINES);
use Cache::Memcached::RustXS::Dict::SlabModel ();
use Cache::Memcached::RustXS::Dict::SettingsAdvisor qw(written_items forecast);

our $VERSION = '1.000';

our @EXPORT_OK = qw(tune tune_fallback stored_memory dictionary_memory worth_a_dictionary
                    choices_error candidate_sizes best_baseline_memory final_bytes);

# What is tried. Dictionary sizes from 2 KiB (a prefix of a few hundred
# keys pays for no more) up to zstd's own default (112640 bytes: past about
# 100 KB dictionaries help little); levels from zstd's default to where
# compressing gets slower than gzip -9.
my @SIZES   = (2048, 4096, 8192, 16384, 32768, 65536, 112640);
my @LEVELS  = (3, 6, 9, 12, 15, 19);
my @METHODS = qw(samples fastcover cover);
my $TRAIN_LEVEL   = 9;     # candidates' tables are made for this level, the final one for its own
my $COVER_SIZES   = 2;     # cover (slow) is tried at the best sizes of fastcover only
# fastCover and cover search their segment size k; their d (the length of
# the d-mers they count) is fixed at 8, zstd's default, not searched over 6
# and 8 as ZDICT does when asked for none: on bench/data's seven families
# (each tuned with and without the keys' count) the search took a third of
# a tuning's time and moved the chosen candidate's cost by 2.1 % at the
# most, either way.
my $COVER_D       = 8;
our $HOLD_OUT     = 4;     # every 4th value is held out: three quarters train
my $MIN_TRAIN     = 5;     # zstd trains on 5 values at the least
my $MIN_HELD      = 2;
# Candidates name a 4-byte ID, as the dictionaries written do: a set's
# (DictionarySet's new_id draws from 65536 up) and train's (zstd's trainer
# derives one from the content, 4 bytes but for 1 in 65536).
my $PLACEHOLDER_ID = 65536;
my $CLEARLY_SLOW  = 2;     # times the compress limit: slow at any dictionary size
my $MAX_TIMED     = 12;    # candidates timed at most, best first, until one is fast enough
my $MIN_GAIN      = 5;     # percent less memory than without a dictionary, to be worth one
our $COMPRESS_RATIO = 0.8; # the clients keep a compressed value at most 0.8 of the raw one
# The compress_threshold of a set's writers (fast_options' with a
# dictionary): values below it are stored raw.
my $SET_THRESHOLD = 64;
my %ZSTD_LEVELS = Cache::Memcached::RustXS::_level_ranges();    # the engine's (cmrx.h)

# Timing: interleaved rounds, each at least $ROUND_TIME seconds; the median
# of each side counts, or, for a candidate against its baseline, the round
# of the median ratio.
my $ROUNDS     = 7;
my $ROUND_TIME = 0.004;

# ---- memory ----------------------------------------------------------------------

# The values stored as $frame_sizes say (undef: raw), each under its own
# key, as the clients store them (compressed, flag 2, when the value is at
# least $opt{threshold} bytes and the frame at most $COMPRESS_RATIO of it;
# else raw), and the memcached memory they take: items, what a memcached
# of the model's settings written past its memory with them in equal
# shares holds of them (the advisor's forecast); memory, the model's
# memory over those items times the values. memory is what the tuner ranks
# by: two frames in the same slab chunks cost the same, one that moves a
# value down a class saves the class's step and the page it fills.
sub stored_memory {
    my ($memory, $samples, $frame_sizes, %opt) = @_;
    my $items = written_items([ map { $_->[0] } @$samples ], [ map { $_->[1] } @$samples ], $frame_sizes,
                              threshold => $opt{threshold} || 0, ratio => $COMPRESS_RATIO);
    my $bytes = 0;
    $bytes += $_->[1] for @$items;
    my $held = @$items ? forecast($memory, $items) : 0;
    return { memory => $held ? int($memory->memory_limit * @$items / $held + 0.5) : 0, bytes => $bytes,
             items => $held };
}

# The memory and bytes of the held-out values with dictionary $bytes (not
# loaded) at $level, as a set's writers store them (their threshold).
sub dictionary_memory {
    my ($memory, $held, $dictionary, $level) = @_;
    my $sizes = Cache::Memcached::RustXS::Zstd::frame_sizes([ map { $_->[1] } @$held ], level => $level,
                                                            dictionary => $dictionary);
    return stored_memory($memory, $held, $sizes, threshold => $SET_THRESHOLD);
}

# The least memory of the codecs without a dictionary, of a tuning's
# baselines (the best_memory tune stored).
sub best_baseline_memory {
    my ($baseline) = @_;
    return $baseline->{best_memory} if defined $baseline->{best_memory};
    my ($best) = sort { $a <=> $b } map { $baseline->{$_}{memory} } @BASELINES;
    return $best;
}

# ---- tuning one prefix -----------------------------------------------------------

sub tune {
    my (%opt) = @_;
    if (my $why = choices_error(%opt)) { Carp::croak("tune: $why") }
    my $work = _work(%opt);
    my $tuned = _split($work, %opt);
    return $tuned if $tuned->{no_dictionary};
    $work->{progress}->('baselines');
    my $baseline = $tuned->{baseline} = _baselines($work->{memory}, $work->{held}, $work->{held_values});
    $baseline->{best_memory} = best_baseline_memory($baseline);
    $baseline->{cost} = _scaled($baseline->{best_memory}, $tuned->{held_out}, $tuned->{keys})
        if defined $tuned->{keys};

    my @candidates = _candidates($work, $tuned);
    my @failed = grep { $_->{error} } @candidates;
    @candidates = _ranked($tuned, grep { !$_->{error} } @candidates);
    $tuned->{training_failures} = [ map { "$_->{method} $_->{size}: $_->{error}" } @failed ];
    if (!@candidates) {
        $tuned->{no_dictionary} = 'zstd could not train a dictionary on these values'
                                . (@failed ? " ($failed[0]{error})" : '');
        return $tuned;
    }
    my $timed = _choose($work, $tuned, \@candidates);
    $tuned->{candidates} = \@candidates;
    if (!$tuned->{choice}) {
        $tuned->{no_dictionary} = "none of the $timed best candidates was fast enough ("
                                . $candidates[0]{verdict} . ' for the best)';
        return $tuned;
    }
    _train_final($work, $tuned);
    return $tuned;
}

# What the phases of a tuning share and its result does not show.
sub _work {
    my (%opt) = @_;
    return { samples => $opt{samples}, memory => $opt{memory} || Cache::Memcached::RustXS::Dict::SlabModel->new,
             progress => $opt{progress} || sub { }, max_size => $opt{max_size} || $SIZES[-1],
             sizes => $opt{sizes}, levels => $opt{levels} || \@LEVELS,
             method => { map { ($_ => 1) } @{ $opt{methods} || \@METHODS } }, id => $opt{id} || $PLACEHOLDER_ID };
}

# The tuning's facts, its samples split into training and held-out values;
# no_dictionary when they are too few.
sub _split {
    my ($work, %opt) = @_;
    my $samples = $work->{samples};
    # Copies of a value stay on one side, and are trained on once: a
    # dictionary holds nothing more for a value's second copy.
    my ($train, $held) = held_out_split($samples, $HOLD_OUT, sub { $_[0][1] });
    $train = distinct_values($train);
    @$work{qw(held held_values train_values)} = ($held, [ map { $_->[1] } @$held ], [ map { $_->[1] } @$train ]);
    my %tuned = (samples => scalar @$samples, sample_bytes => sum_length([ map { $_->[1] } @$samples ]),
                 trained_on => scalar @$train, held_out => scalar @$held,
                 held_out_bytes => sum_length($work->{held_values}), limits => _speed_limits(%opt),
                 held => $held, keys => $opt{keys}, cost_model => defined $opt{keys} ? 'keys' : 'memory');
    if (@$train < $MIN_TRAIN || @$held < $MIN_HELD) {
        $tuned{no_dictionary} = sprintf 'too few values (%d; a dictionary needs %d or more, a few hundred help)',
                                    scalar @$samples, $MIN_TRAIN + $MIN_HELD + 1;
        return \%tuned;
    }
    $tuned{training_bytes} = sum_length($work->{train_values});
    # What the final dictionary is trained on: every distinct sample.
    $tuned{distinct_bytes} = sum_length([ map { $_->[1] } @{ distinct_values($samples) } ]);
    return \%tuned;
}

# Every candidate, searched coarse to fine where it can change the choice
# (the POD's DESCRIPTION). The samples method goes first at every size: it
# trains in a tenth of fastcover's time. The segment-size search is most of
# a fastcover or cover training's time, hence once. $EXHAUSTIVE: every size
# of every method at every level (what t/68-tuner-search.t compares with).
our $EXHAUSTIVE = 0;
our $SEARCH_K_ONCE = 1;
my $REFINED = 5;
my $FEW_LEVELS = 3;    # levels all measured at once, as few as that

sub _candidates {
    my ($work, $tuned) = @_;
    my %method = %{ $work->{method} };
    my $size_of = candidate_sizes(sizes => $work->{sizes}, max_size => $work->{max_size},
                                  training_bytes => $tuned->{training_bytes});
    my @levels = @{ $work->{levels} };
    my $all_levels = $EXHAUSTIVE || @levels <= $FEW_LEVELS;
    my @first = $all_levels ? @levels : ($levels[ int($#levels / 2) ]);
    my %trained;    # "method size" => its candidates
    my $train = sub {
        my ($method, $size) = @_;
        return if $trained{"$method $size"};
        $work->{progress}->("training $method $size");
        # Cover at fastcover's segment size there, fastcover at its first
        # one's: their own searches of k were the slowest part of a tuning.
        my ($k) = $EXHAUSTIVE || $method eq 'samples' ? ()
                : $method eq 'cover' ? map { $_->{k} } grep { !$_->{error} } @{ $trained{"fastcover $size"} || [] }
                : $SEARCH_K_ONCE ? map { $_->{k} } grep { $_->{method} eq 'fastcover' && !$_->{error} } map { @$_ } values %trained
                : ();
        my @c = _train_candidate($work->{train_values}, $work->{held}, $work->{memory}, \@first,
                                 method => $method, size => $size, id => $work->{id}, k => $k);
        _cost($_, $tuned) for grep { !$_->{error} } @c;
        $trained{"$method $size"} = \@c;
        return;
    };
    my $least = sub {    # the sizes of a method, least cost first
        my ($method) = @_;
        my %cost;
        for my $c (grep { $_->{method} eq $method && !$_->{error} } map { @$_ } values %trained) {
            $cost{ $c->{size} } = $c->{cost} if !defined $cost{ $c->{size} } || $c->{cost} < $cost{ $c->{size} };
        }
        return sort { $cost{$a} <=> $cost{$b} || $a <=> $b } keys %cost;
    };
    $train->('samples', $_) for $method{samples} ? @{ $size_of->{samples} } : ();
    my @fastcover = $method{fastcover} ? reverse @{ $size_of->{fastcover} } : ();
    $train->('fastcover', $fastcover[$_]) for grep { $EXHAUSTIVE || $_ % 2 == 0 } 0 .. $#fastcover;
    if (my ($best) = $least->('fastcover')) {
        my ($at) = grep { $fastcover[$_] == $best } 0 .. $#fastcover;
        $train->('fastcover', $fastcover[$_]) for grep { $_ >= 0 && $_ <= $#fastcover } $at - 1, $at + 1;
    }
    my @cover_sizes = !$method{cover} ? ()
                    : $method{fastcover} ? ($least->('fastcover'))[0 .. $COVER_SIZES - 1]
                    : @{ $size_of->{fastcover} };
    $train->('cover', $_) for grep { defined } @cover_sizes;
    my @candidates = map { @$_ } @trained{ sort keys %trained };
    return @candidates if $all_levels;
    # The other levels of the dictionaries of least cost, but those that
    # compress clearly too slowly.
    my @best = grep { !$_->{error} } _ranked($tuned, grep { !$_->{error} } @candidates);
    my $too_slow = _levels_too_slow($work, $tuned, $best[0], grep { $_ > $first[0] } @levels);
    for my $c (@best[ 0 .. ($#best < $REFINED - 1 ? $#best : $REFINED - 1) ]) {
        $work->{progress}->("measuring $c->{method} $c->{size} at every level");
        for my $level (grep { $_ != $first[0] && !$too_slow->{$_} } @levels) {
            my $measured = dictionary_memory($work->{memory}, $work->{held}, $c->{dictionary}, $level);
            my %at = (%$c, level => $level, %$measured);
            delete @at{qw(cost keys_memory cost_bytes)};
            _cost(\%at, $tuned);
            push @candidates, \%at;
        }
    }
    return @candidates;
}

# The levels above the coarse pass's whose compression is clearly too slow
# ($CLEARLY_SLOW times the limit or more; the rule _choose applies), found
# by timing the best dictionary from the lowest of them up, so that the
# dictionaries refined are not measured at them (zstd -19 measured five
# times took a fifth of a tuning): { level => why }, also in the tuning's
# levels_too_slow. The first level clearly too slow rules out those above
# it untimed (they compress no faster); the candidates timed here are not
# timed again.
sub _levels_too_slow {
    my ($work, $tuned, $c, @higher) = @_;
    my %too_slow;
    my $limit = $tuned->{limits}{compress};
    return \%too_slow unless $c && $limit;
    @higher = sort { $a <=> $b } @higher;
    for my $at (0 .. $#higher) {
        my $level = $higher[$at];
        $work->{progress}->("timing $c->{method} $c->{size} level $level");
        my $timed = _time_candidate({ dictionary => $c->{dictionary}, level => $level }, $work->{held_values},
                                    $tuned->{baseline}, $tuned->{limits});
        $work->{timed}{"$c->{method} $c->{size} $level"} = $timed;
        next unless $timed->{us_compress} > $CLEARLY_SLOW * $limit * $timed->{memGzip_us_compress};
        my $why = sprintf 'level %d compresses %.1f times slower than memGzip (%s %d: %.1f vs %.1f us)',
            $level, $timed->{us_compress} / $timed->{memGzip_us_compress}, $c->{method}, $c->{size},
            $timed->{us_compress}, $timed->{memGzip_us_compress};
        $too_slow{$_} = $why for @higher[ $at .. $#higher ];
        last;
    }
    $tuned->{levels_too_slow} = \%too_slow if %too_slow;
    return \%too_slow;
}

# Least cost first (the memory over the prefix's keys and the dictionary,
# or, the keys unknown, the memory): the most items forecast. On a tie,
# the cheaper first: the smaller dictionary, the lower level (the faster
# one), the simpler method.
sub _ranked {
    my ($tuned, @candidates) = @_;
    my %method_rank = (samples => 0, fastcover => 1, cover => 2);
    return sort {
        $a->{cost} <=> $b->{cost} || $b->{items} <=> $a->{items}
            || $a->{dictionary_bytes} <=> $b->{dictionary_bytes}
            || $a->{level} <=> $b->{level} || $method_rank{ $a->{method} } <=> $method_rank{ $b->{method} }
    } @candidates;
}

# The first candidate, best first, that is fast enough: the choice; each
# one's verdict. How many were timed.
sub _choose {
    my ($work, $tuned, $candidates) = @_;
    my $timed = 0;
    # A candidate that compresses too slowly rules out, untimed, those of
    # at least its level and its dictionary's size: they compress no faster.
    # One $CLEARLY_SLOW times over the limit rules out those of at least
    # its level whatever their size: a level's search costs more than its
    # dictionary's size changes (on bench/data, level 19 with 64 KiB
    # compressed 6 % faster than with 110 KiB, both fifteen times slower
    # than memGzip).
    my @slow;
    for my $c (@$candidates) {
        last if $timed >= $MAX_TIMED;
        my ($like) = grep { $c->{level} >= $_->{level} && ($c->{size} >= $_->{size} || $_->{clearly_slow}) } @slow;
        if ($like) {
            $c->{verdict} = "compresses no faster than $like->{method} $like->{size} level $like->{level}, "
                          . 'too slow';
            next;
        }
        if (my $before = $work->{timed}{"$c->{method} $c->{size} $c->{level}"}) {
            $c->{$_} = $before->{$_} for grep { defined $before->{$_} }
                                         qw(us_compress us_decompress memGzip_us_compress gzip_us_decompress);
        } else {
            $work->{progress}->("timing $c->{method} $c->{size} level $c->{level}");
            _time_candidate($c, $work->{held_values}, $tuned->{baseline}, $tuned->{limits});
        }
        $timed++;
        my $why = _too_slow($c, $tuned->{baseline}, $tuned->{limits});
        if ($why =~ /\Acompresses/) {
            push @slow, { %$c, clearly_slow => $c->{us_compress}
                                               > $CLEARLY_SLOW * $tuned->{limits}{compress} * $c->{memGzip_us_compress} };
        }
        if ($why) { $c->{verdict} = $why; next }
        $c->{verdict} = 'chosen';
        $tuned->{choice} = $c;
        last;
    }
    my $choice = $tuned->{choice};
    for my $c (grep { !$_->{verdict} } @$candidates) {
        $c->{verdict} = !$choice ? 'not timed'
                      : $c->{cost} == $choice->{cost} ? 'as many items forecast, and a larger dictionary or a higher level'
                      : 'more memory';
    }
    return $timed;
}

# The dictionary written: the choice, trained on every sample, for its
# own level, with the parameters the search found.
sub _train_final {
    my ($work, $tuned) = @_;
    my $c = $tuned->{choice};
    $work->{progress}->("training the chosen $c->{method} $c->{size} on every value");
    my %how = (size => $c->{size}, method => $c->{method}, level => $c->{level}, id => $work->{id});
    @how{qw(k d steps)} = ($c->{k}, $c->{d}, 0) if $c->{method} ne 'samples';
    my ($final, $used) = eval {
        Cache::Memcached::RustXS::Zstd::train_dictionary_with_parameters([ map { $_->[1] } @{ distinct_values($work->{samples}) } ],
                                                                         %how);
    };
    if (!defined $final) {
        my $why = Cache::Memcached::RustXS::_error_message($@);
        $tuned->{no_dictionary} = "training the chosen dictionary on every value failed: $why";
        delete $tuned->{choice};
        return;
    }
    $tuned->{dictionary} = $final;
    $tuned->{parameters} = $used;
    return;
}

# Why the methods or levels asked for are not ones the tuner takes, or ''.
sub choices_error {
    my (%opt) = @_;
    my %known = map { ($_ => 1) } @METHODS;
    if (my $methods = $opt{methods}) {
        return 'methods must name one at least' unless @$methods;
        for my $method (@$methods) {
            return "methods are @METHODS, not '" . (defined $method ? $method : 'undef') . "'"
                unless defined $method && $known{$method};
        }
    }
    if (my $levels = $opt{levels}) {
        return 'levels must name one at least' unless @$levels;
        my ($min, $max) = @ZSTD_LEVELS{qw(zstd_min zstd_max)};
        for my $level (@$levels) {
            return "levels are zstd levels, $min to $max but 0, not '" . (defined $level ? $level : 'undef') . "'"
                unless defined $level && $level =~ /\A-?[0-9]+\z/ && $level && $level >= $min && $level <= $max;
        }
    }
    return '';
}

# The sizes the samples can support: of the sizes tried (up to max_size),
# none larger than the training values themselves (a dictionary asked of
# too few samples comes out worse, not smaller) -- the samples method also
# at the next size up, which then holds them all; the smallest size when
# none fits. { samples => [...], fastcover => [...] } (cover: fastcover's).
sub candidate_sizes {
    my (%opt) = @_;
    my $max_size = $opt{max_size} || $SIZES[-1];
    my @sizes = grep { $_ <= $max_size } ($opt{sizes} ? sort { $a <=> $b } @{ $opt{sizes} } : @SIZES);
    @sizes = ($max_size) unless @sizes;
    my @fitting = grep { $_ <= $opt{training_bytes} } @sizes;
    my ($all_fit) = grep { $_ > $opt{training_bytes} } @sizes;
    my @samples = (@fitting, defined $all_fit ? $all_fit : ());
    return { samples => @samples ? \@samples : [ $sizes[0] ], fastcover => @fitting ? \@fitting : [ $sizes[0] ] };
}

# The memory of a candidate over the prefix's keys: its held-out memory per
# value times the keys; and its cost: that plus the bytes of the dictionary
# it would write, held once (the keys unknown: its held-out memory alone).
sub _cost {
    my ($c, $tuned) = @_;
    return if defined $c->{cost};
    if (!defined $tuned->{keys}) {
        $c->{cost} = $c->{memory};
        return;
    }
    $c->{keys_memory} = _scaled($c->{memory}, $tuned->{held_out}, $tuned->{keys});
    $c->{cost_bytes} = final_bytes($c, $tuned);
    $c->{cost} = $c->{keys_memory} + $c->{cost_bytes};
    return;
}

sub _scaled {
    my ($memory, $held, $keys) = @_;
    return $held ? int($memory * $keys / $held + 0.5) : 0;
}

# The bytes of the dictionary a candidate becomes when trained on every
# sample: the size asked, or for the samples method as much of it as all
# the samples fill (the candidate holds the training three quarters).
sub final_bytes {
    my ($c, $tuned) = @_;
    my $grown = $tuned->{training_bytes}
        ? int($c->{dictionary_bytes} * ($tuned->{distinct_bytes} // $tuned->{sample_bytes}) / $tuned->{training_bytes} + 0.5)
        : $c->{dictionary_bytes};
    my $bytes = $c->{dictionary_bytes} > $grown ? $c->{dictionary_bytes} : $grown;
    return $bytes < $c->{size} ? $bytes : $c->{size};
}

# Whether a tuned prefix is worth a dictionary: the choice saves at least
# $MIN_GAIN % of the memory the best codec without one takes on the
# held-out values and, when $keys counts the prefix's keys (a server's,
# not samples read from files), more memcached memory over those keys than
# the dictionary's own bytes.
sub worth_a_dictionary {
    my ($tuned, $keys) = @_;
    return (0, $tuned->{no_dictionary}) unless $tuned->{choice};
    my $base = $tuned->{baseline};
    my $best = best_baseline_memory($base);
    my $c = $tuned->{choice};
    my $gain = $best ? 100 * (1 - $c->{memory} / $best) : 0;
    return (0, sprintf 'a dictionary would save only %.1f %% of the memory without one (%d %% needed)',
                       $gain, $MIN_GAIN) if $gain < $MIN_GAIN;
    $keys = $tuned->{keys} unless defined $keys;
    return (1) unless defined $keys;
    my $saved = int(($best - $c->{memory}) * $keys / $tuned->{held_out});
    my $bytes = defined $tuned->{dictionary} ? length $tuned->{dictionary} : final_bytes($c, $tuned);
    return (0, sprintf 'no dictionary size pays for itself over its %d keys: the one that costs least '
                     . '(%s %d, level %d) would save %d bytes of memcached memory, less than its own %d',
                       $keys, $c->{method}, $c->{size}, $c->{level}, $saved, $bytes)
        if $saved < $bytes;
    return (1);
}

# A dictionary of one method and size trained on the training values,
# measured at every level on the held-out ones: a candidate per level (the
# ranking and the speed limits look at dictionary and level together).
sub _train_candidate {
    my ($train_values, $held, $memory, $levels, %how) = @_;
    my ($dict, $used) = eval {
        Cache::Memcached::RustXS::Zstd::train_dictionary_with_parameters(
            $train_values, size => $how{size}, method => $how{method}, level => $TRAIN_LEVEL, id => $how{id},
            ($how{method} eq 'samples' ? () : (d => $COVER_D)), ($how{k} ? (k => $how{k}, steps => 0) : ()));
    };
    if (!defined $dict) {
        my $why = Cache::Memcached::RustXS::_error_message($@);
        $why =~ s/\Atrain_dictionary_with_parameters: //;
        return { method => $how{method}, size => $how{size}, error => $why };
    }
    return map {
        my $measured = dictionary_memory($memory, $held, $dict, $_);
        +{ method => $how{method}, size => $how{size}, k => $used->{k}, d => $used->{d},
           dictionary => $dict, dictionary_bytes => length $dict, level => $_,
           memory => $measured->{memory}, bytes => $measured->{bytes}, items => $measured->{items} };
    } @$levels;
}

# What the clients store today, and the codecs a prefix without a
# dictionary could use, on the held-out values: memory, bytes and times.
sub _baselines {
    my ($memory, $held, $values) = @_;
    my %baseline;
    my %codec = (
        memGzip => [ sub { Compress::Zlib::memGzip($_[0]) },
                     sub { my $copy = $_[0]; Compress::Zlib::memGunzip($copy) } ],
        gzip    => [ \&Cache::Memcached::RustXS::Zlib::memGzip, \&Cache::Memcached::RustXS::Zlib::memGunzip ],
        zstd    => [ sub { Cache::Memcached::RustXS::Zstd::compress($_[0], level => 3) },
                     \&Cache::Memcached::RustXS::Zstd::decompress ],
    );
    my %frames;
    for my $name (sort keys %codec) {
        $frames{$name} = [ map { $codec{$name}[0]->($_) } @$values ];
        $baseline{$name} = stored_memory($memory, $held, [ map { length } @{ $frames{$name} } ]);
        $baseline{$name}{codec} = $codec{$name};
    }
    $baseline{raw} = stored_memory($memory, $held, []);
    # The two the speed limits compare with, timed against each other in
    # the same rounds as each candidate later.
    my ($memgzip_us, $gzip_us) = _race([ map { my $compress = $_; sub { $compress->($_) for @$values } }
                                         $codec{memGzip}[0], $codec{gzip}[0] ]);
    $baseline{memGzip}{us_compress} = $memgzip_us / @$values;
    $baseline{gzip}{us_compress}    = $gzip_us / @$values;
    my ($memgunzip_us, $gunzip_us) = _race([ sub { $codec{memGzip}[1]->($_) for @{ $frames{memGzip} } },
                                             sub { $codec{gzip}[1]->($_) for @{ $frames{gzip} } } ]);
    $baseline{memGzip}{us_decompress} = $memgunzip_us / @$values;
    $baseline{gzip}{us_decompress}    = $gunzip_us / @$values;
    $baseline{frames} = \%frames;
    return \%baseline;
}

# Times a candidate's compression against memGzip and its decompression
# against our gunzip, in interleaved rounds on the held-out values.
my $TIMING_ID = 0;
sub _time_candidate {
    my ($c, $values, $baseline, $limits) = @_;
    $limits ||= {};
    # Loaded under an ID of its own, which no set uses.
    my $id = 0x7f00_0000 + ++$TIMING_ID;
    my $bytes = Cache::Memcached::RustXS::Zstd::dictionary_with_id($c->{dictionary}, $id);
    load_dictionary_bytes($bytes);
    my $level = $c->{level};
    my $gzip_c = $baseline->{memGzip}{codec}[0];
    my $gunzip = $baseline->{gzip}{codec}[1];
    my $gz = $baseline->{frames}{gzip};
    my ($ours_c, $theirs_c) = _paired_race([
        sub { Cache::Memcached::RustXS::Zstd::compress($_, level => $level, dictionary => $id) for @$values },
        sub { $gzip_c->($_) for @$values } ], $limits->{compress}, 0);
    $c->{us_compress}   = $ours_c / @$values;
    $c->{memGzip_us_compress} = $theirs_c / @$values;
    # Compressing too slowly decides the verdict: the decompression, which
    # could not change it, is not timed.
    return $c if $limits->{compress} && $ours_c > $limits->{compress} * $theirs_c;
    my @frames = map { Cache::Memcached::RustXS::Zstd::compress($_, level => $level, dictionary => $id) } @$values;
    my ($ours_d, $theirs_d) = _paired_race([
        sub { Cache::Memcached::RustXS::Zstd::decompress($_) for @frames },
        sub { $gunzip->($_) for @$gz } ], $limits->{decompress}, 1);
    $c->{us_decompress} = $ours_d / @$values;
    $c->{gzip_us_decompress}  = $theirs_d / @$values;
    return $c;
}

sub _speed_limits {
    my (%opt) = @_;
    return {
        compress   => defined $opt{compress_time}   ? $opt{compress_time}   : 1,
        decompress => defined $opt{decompress_time} ? $opt{decompress_time} : 1,
    };
}

# Why a timed candidate is too slow for the limits (0 for no limit), or ''.
sub _too_slow {
    my ($c, $baseline, $limits) = @_;
    if ($limits->{compress} && $c->{us_compress} > $limits->{compress} * $c->{memGzip_us_compress}) {
        return sprintf 'compresses slower than %smemGzip (%.1f vs %.1f us)',
            ($limits->{compress} == 1 ? '' : "$limits->{compress} x "), $c->{us_compress}, $c->{memGzip_us_compress};
    }
    if ($limits->{decompress} && $c->{us_decompress} >= $limits->{decompress} * $c->{gzip_us_decompress}) {
        return sprintf 'decompresses no faster than %sour gzip (%.1f vs %.1f us)',
            ($limits->{decompress} == 1 ? '' : "$limits->{decompress} x "), $c->{us_decompress}, $c->{gzip_us_decompress};
    }
    return '';
}

# Microseconds each of the subs takes: rounds in which each runs in turn
# (the order rotating), each run repeated to last $ROUND_TIME; the median
# of the rounds.
sub _race {
    my ($subs) = @_;
    return map { my @s = sort { $a <=> $b } @$_; 1e6 * $s[ int(@s / 2) ] } _race_rounds($subs);
}

# Microseconds two subs take, ours and theirs: both times of the round
# whose ratio is the median of the rounds'. A load that changes between
# rounds slows both subs of a round alike, so the ratio holds where either
# median alone would move (memGzip's ranged from 59 to 174 us on a loaded
# machine). With a $limit (a factor; 0: none), the rounds stop once more
# than half of them are on one side of it (with $at_limit_slow, at it
# counts as slow): the verdict all the rounds would give, without timing a
# candidate fifteen times too slow seven times over.
sub _paired_race {
    my ($subs, $limit, $at_limit_slow) = @_;
    my $decided = !$limit ? undef : sub {
        my ($ours, $theirs) = @_;
        my $slow = grep { $at_limit_slow ? $ours->[$_] >= $limit * $theirs->[$_] : $ours->[$_] > $limit * $theirs->[$_] }
                   0 .. $#$ours;
        my $half = int($ROUNDS / 2) + 1;
        return $slow >= $half || @$ours - $slow >= $half;
    };
    my ($ours, $theirs) = _race_rounds($subs, $decided);
    my @rounds = sort { $ours->[$a] * $theirs->[$b] <=> $ours->[$b] * $theirs->[$a] } 0 .. $#$ours;
    my $median = $rounds[ int(@rounds / 2) ];
    return (1e6 * $ours->[$median], 1e6 * $theirs->[$median]);
}

# The seconds a call of each sub took, per round: [[sub 0's rounds], ...];
# fewer rounds than $ROUNDS when $decided (given those lists) says so.
# The first calls, which count how many calls fill a round, are the first
# round when each lasted a round already (a slow candidate's single call
# on many values), in the order the first round takes.
sub _race_rounds {
    my ($subs, $decided) = @_;
    my @once = map {
        my $t0 = Time::HiRes::time();
        $_->();
        Time::HiRes::time() - $t0;
    } @$subs;
    my @calls = map { $_ > 0 ? int($ROUND_TIME / $_) + 1 : 100 } @once;
    my @times = map { [] } @$subs;
    my $first = 0;
    if (!grep { $_ < $ROUND_TIME } @once) {
        push @{ $times[$_] }, $once[$_] for 0 .. $#$subs;
        $first = 1;
        return @times if $decided && $decided->(@times);
    }
    for my $round ($first .. $ROUNDS - 1) {
        for my $j (0 .. $#$subs) {
            my $i = ($j + $round) % @$subs;
            my $t0 = Time::HiRes::time();
            $subs->[$i]->() for 1 .. $calls[$i];
            push @{ $times[$i] }, (Time::HiRes::time() - $t0) / $calls[$i];
        }
        last if $decided && $decided->(@times);
    }
    return @times;
}

# ---- the fallback ------------------------------------------------------------------

# For keys whose prefix has no dictionary: zstd without one, or gzip, at the
# level that takes least memory and is fast enough, measured on $samples.
sub tune_fallback {
    my (%opt) = @_;
    my $memory = $opt{memory} || Cache::Memcached::RustXS::Dict::SlabModel->new;
    my $samples = $opt{samples};
    my $limits = _speed_limits(%opt);
    return { method => 'gzip', level => 9, samples => 0, why => 'no values to measure' } unless @$samples;
    my @values = map { $_->[1] } @$samples;
    my $gzip_c = sub { Compress::Zlib::memGzip($_[0]) };
    my @memgzip = map { $gzip_c->($_) } @values;
    my $base = stored_memory($memory, $samples, [ map { length } @memgzip ]);
    my ($memgzip_us) = _race([ sub { $gzip_c->($_) for @values } ]);
    my @gz = map { Cache::Memcached::RustXS::Zlib::memGzip($_) } @values;
    my ($gunzip_us) = _race([ sub { Cache::Memcached::RustXS::Zlib::memGunzip($_) for @gz } ]);
    my @tried;
    for my $level (3, 9) {
        my $sizes = Cache::Memcached::RustXS::Zstd::frame_sizes(\@values, level => $level);
        push @tried, { method => 'zstd', level => $level, %{ stored_memory($memory, $samples, $sizes) },
                       compress => sub { Cache::Memcached::RustXS::Zstd::compress($_[0], level => $level) },
                       decompress => \&Cache::Memcached::RustXS::Zstd::decompress };
    }
    for my $level (6, 9) {
        my @frames = map { local $Cache::Memcached::RustXS::Zlib::Level = $level;
                           Cache::Memcached::RustXS::Zlib::memGzip($_) } @values;
        push @tried, { method => 'gzip', level => $level,
                       %{ stored_memory($memory, $samples, [ map { length } @frames ]) },
                       compress => sub { local $Cache::Memcached::RustXS::Zlib::Level = $level;
                                         Cache::Memcached::RustXS::Zlib::memGzip($_[0]) },
                       decompress => \&Cache::Memcached::RustXS::Zlib::memGunzip };
    }
    @tried = sort { $a->{memory} <=> $b->{memory} || ($a->{method} eq 'zstd' ? -1 : 1) } @tried;
    my $choice;
    for my $t (@tried) {
        my @frames = map { $t->{compress}->($_) } @values;
        my ($compress_us, $decompress_us) = _race([ sub { $t->{compress}->($_) for @values },
                                                    sub { $t->{decompress}->($_) for @frames } ]);
        $t->{us_compress} = $compress_us / @values;
        $t->{us_decompress} = $decompress_us / @values;
        my $slow = ($limits->{compress} && $t->{us_compress} > $limits->{compress} * $memgzip_us / @values)
                || ($limits->{decompress} && $t->{method} eq 'zstd'
                    && $t->{us_decompress} >= $limits->{decompress} * $gunzip_us / @values);
        $t->{verdict} = $slow ? 'too slow' : $choice ? 'more memory' : 'chosen';
        $choice ||= $t unless $slow;
    }
    $choice ||= $tried[-1];
    delete @$_{qw(compress decompress)} for @tried;
    my $raw = sum_length(\@values);
    return { method => $choice->{method}, level => $choice->{level}, samples => scalar @values,
             memory => $choice->{memory}, bytes => $choice->{bytes}, memGzip_memory => $base->{memory},
             savings => $raw ? round(100 * (1 - $choice->{bytes} / $raw), 1) : 0, tried => \@tried };
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Tune - the zstd dictionary, size and level that make a key prefix's values take least memcached memory, measured

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::Tune qw(tune tune_fallback);
    use Cache::Memcached::RustXS::Dict::SlabModel;

    my @samples = map { [ "user:$_", qq({"id":$_,"name":"user$_","email":"user$_\@example.com","plan":"free","tags":["a","b"]}) ] }
                  1 .. 400;
    my $memory  = Cache::Memcached::RustXS::Dict::SlabModel->new;    # or ->from_server($server)

    # By default the choice must compress as fast as memGzip and decompress
    # faster than gzip, timed here; 0 lifts the limits: memory alone decides.
    # keys: how many keys the prefix holds (a server's count), so that the
    # dictionary's own bytes count against what it saves over them.
    my $tuned = tune(samples => \@samples, memory => $memory, keys => 400,
                     compress_time => 0, decompress_time => 0);
    if (my $c = $tuned->{choice}) {
        printf "%s dictionary of %d bytes at level %d: %d bytes of memcached memory, memGzip %d\n",
            $c->{method}, length $tuned->{dictionary}, $c->{level}, $c->{memory},
            $tuned->{baseline}{memGzip}{memory};
    } else {
        print "no dictionary: $tuned->{no_dictionary}\n";
    }

    # Keys whose prefix gets no dictionary: zstd without one, or gzip?
    my $fallback = tune_fallback(samples => \@samples, memory => $memory);
    print "fallback: $fallback->{method} level $fallback->{level}\n";

=head1 DESCRIPTION

How every C<cmrx-dict> command chooses a prefix's dictionary: C<train
--all> and C<report --dictionaries> on the prefix's samples, plain
C<report> and single-prefix C<train> on the half of them they do not
measure on. The samples (C<[$key, $value]> pairs, values uncompressed, in
key order) are split: every 4th distinct value is held out, the others
train, and every copy of a value (a cache holds one value under many
keys) goes where its first went, so that no candidate is judged on
values it was trained on
(L<Cache::Memcached::RustXS::Dict/"held_out_split(\@items, $every, $value_of)">).
Candidate dictionaries are trained on the distinct training values (the
chosen one, at the end, on every distinct sample):

=over 4

=item *

the training values themselves as the content (C<samples>), and ZDICT's
fastCover (C<fastcover>), at sizes from 2 KiB to 110 KiB (C<max_size>;
C<sizes> replaces the list):
none larger than the training values (the samples method also at the next
size up, which holds them all), since a dictionary asked of too few
samples comes out worse, not smaller;

=item *

ZDICT's cover (C<cover>, slower) at the two sizes where fastCover did
best. fastCover searches its segment size (C<k>) once, at the largest
size it is trained at; its other sizes and cover take the one it found
(C<$Cache::Memcached::RustXS::Dict::Tune::SEARCH_K_ONCE> false: fastCover
searches it at every size, cover takes fastCover's at its size).

=back

The search goes coarse to fine, spending its time where the choice can
change: C<samples> at every size and fastCover at every other size from
the largest, each measured at the middle level tried; fastCover again at
the sizes beside its best; cover; then the five dictionaries of least
cost measured at every level (three levels or fewer are all measured at
once) but those that compress clearly too slowly: with a compression
limit, the best dictionary is timed from the lowest of the other levels
up, and the first level at which it compresses twice the limit or more is
left out, with those above it, untimed (C<levels_too_slow> says why). A candidate that compresses
too slowly rules out, untimed, those of at least its size and level; one
twice the limit or more, those of at least its level at any size. With
C<$Cache::Memcached::RustXS::Dict::Tune::EXHAUSTIVE> true, every size of
every method is trained, cover searching its own segment size, each at
every level: F<t/68-tuner-search.t> checks that the search chooses as it
does on F<bench/data> (or within 1 % of its items forecast).

The segment-size search takes 4 steps; fastCover's and cover's
d-mer length (C<d>) is 8, zstd's default, where ZDICT would also try 6:
on bench/data that search took a third of a tuning's time and moved the
chosen candidate's cost by 2.1 % at the most, either way
(F<bench/README.md>, "Measured apart").

Each is measured on the held-out values at levels 3, 6, 9, 12, 15 and 19 by
the memcached memory they take, the objective the advisor of memcached's
settings shares (L<Cache::Memcached::RustXS::Dict::SettingsAdvisor/forecast($model, \@items)>):
the values as the set's writers store them (each under its own key, with
flags; a frame that is not at most 0.8 of its value, or a value under
L<fast_options' threshold|Cache::Memcached::RustXS::Zstd/"compress_threshold =E<gt> 64 with a dictionary, 208 without">,
is stored raw, as both clients do), naming a 4-byte dictionary ID,
as the dictionaries C<cmrx-dict> writes do (a set's random IDs from
65536, and zstd's own for C<train>), are forecast by
L<Cache::Memcached::RustXS::Dict::SlabModel/forecast_items(\@items)> for a
memcached of the node's settings (a pool's nodes together; memcached's
defaults for values read from files) written past its memory with them:
the items it holds. Their memory is C<-m> over those items, times the
values. Two frames that land in the same slab chunks cost the same
whatever their bytes; one that moves a value down a class saves the class
and the pages it fills. The codecs without a dictionary (C<memGzip>, our
C<gzip>, C<zstd> at level 3, C<raw>) are measured the same way.

Candidates are ranked by their I<cost>. When C<keys> says how many keys
the prefix holds (C<cmrx-dict> gives a server's count of the prefix's
keys), the cost is the memcached memory of those keys (the held-out
memory per value times C<keys>) plus the bytes of the dictionary the
candidate becomes (the size asked; for the C<samples> method, as much of
it as every sample fills). The dictionary is counted once: it lives in
each client process, not in memcached, and is loaded once per process
(shared by forked workers); counting it once against the cache's memory
means a dictionary must save at least its own size over the keys it
serves, so a prefix of a hundred keys gets a small dictionary and a
prefix of a million the large one that stores least. Without C<keys>
(values read from files, which are a sample, not the cache, and say
nothing of how many keys it holds) the cost is the held-out memory
alone: the most items forecast.

On equal cost (as many items forecast), the cheaper candidate goes first:
the smaller dictionary, then the lower level (the faster one), then the
simpler method. A larger dictionary or a higher level that writes fewer
bytes into the same slab chunks is not taken; its verdict says so (C<as
many items forecast, and a larger dictionary or a higher level>).

The first candidate in that order that is fast enough is chosen: by default its compression is no
slower per value than Compress::Zlib's C<memGzip> (what the clients pay
today) and its decompression faster than this distribution's gzip
(L<Cache::Memcached::RustXS::Zlib/"memGunzip($gz)">), both timed on the held-out
values in the same interleaved rounds as the candidate (7 of them; the
times compared are those of the round whose ratio of the two is the
median, so a load that changes between rounds does not decide). The
rounds stop once more than half of them are on one side of the limit (the
median of all seven would be on that side too), and a candidate that
compresses too slowly has its decompression left untimed.
C<compress_time> and C<decompress_time> change the factors (0: no limit).

The chosen dictionary is then trained again on every sample, for its
level, with the parameters the search found, and returned. The report of a
tuning lists the candidates in rank order with why each was not chosen.

Whether the choice is worth a dictionary at all is
L</worth_a_dictionary($tuned, $keys)>; what keys without one get, the
set's fallback, is measured by L</tune_fallback(samples =E<gt> \@pairs, memory =E<gt> $model, compress_time =E<gt> 1, decompress_time =E<gt> 1)>.
C<cmrx-dict train --all> tunes the whole cache as one more prefix, the
empty one, on every prefix's values pooled as memcached holds them
(L<Cache::Memcached::RustXS::Dict::SetTrainer/whole_cache_samples(\@groups, max =E<gt> $count)>),
its dictionary's bytes counted against every key; keys without the
delimiter get no dictionary of their own.

=head1 FUNCTIONS

Exported on request.

=over 4

=item tune(%options)

    my $tuned = tune(samples => \@pairs, memory => $model, keys => $count,
        max_size => 112640, sizes => [2048, 4096, ...], levels => [3, 6, 9, 12, 15, 19],
        methods => [qw(samples fastcover cover)], id => 65536,
        compress_time => 1, decompress_time => 1, progress => sub { my ($what) = @_ });

Tunes one prefix. C<keys> (optional) is how many keys the prefix holds:
with it the dictionary's bytes are in the cost (above); without it the
held-out memory alone ranks. C<sizes> (optional) replaces the sizes
tried (C<cmrx-dict --size> gives one); C<max_size> bounds them. C<levels>
and C<methods> (optional) replace the levels and the methods tried
(C<cover> without C<fastcover> is tried at every size); it croaks on
others (L</choices_error(methods =E<gt> \@methods, levels =E<gt> \@levels)>). C<id> is
the dictionary ID the frames are measured with
(its size in each frame counts: 1 byte below 256, 2 below 65536, else 4;
by default 65536, 4 bytes, as the IDs of the dictionaries C<cmrx-dict>
writes take). Returns a hash
reference: C<samples>, C<sample_bytes>, C<distinct_bytes> (of the samples
without copies of a value, which the final dictionary is trained on),
C<trained_on> (the distinct training values), C<training_bytes>, C<held_out>,
C<held_out_bytes>, C<held> (the held-out pairs), C<keys> and
C<cost_model> (C<keys> or C<memory>); C<baseline> (the held-out
values under C<memGzip>, our C<gzip>, C<zstd> at level 3 and C<raw>: each
C<memory> and C<bytes>, and for the first two C<us_compress> and
C<us_decompress>; C<best_memory>, the least of them, and with C<keys>
C<cost>, that memory over the keys); C<candidates> (best first: C<method>, C<size> asked,
C<dictionary_bytes>, C<k>, C<d>, C<level>, C<memory>, C<bytes>, C<cost>
and, with C<keys>, C<keys_memory> and C<cost_bytes>, its two parts (a
dictionary is a candidate at each level), for
the timed ones C<us_compress>, C<us_decompress> (not when it compresses
too slowly) and the baselines' times of
the same rounds, and C<verdict>: C<chosen>, why it was too slow, C<more
memory> or C<not timed>); C<choice> (the chosen candidate); C<dictionary>
(the bytes trained on every sample) and C<parameters> (as
L<Cache::Memcached::RustXS::Zstd/"train_dictionary_with_parameters(\@samples, %options)"> returns
them); C<levels_too_slow> (C<< { level => why } >>, the levels left
unmeasured, when any). Without a dictionary, C<no_dictionary> says why (too few values,
training failed, none fast enough) and C<choice> and C<dictionary> are
absent.

=item tune_fallback(samples => \@pairs, memory => $model, compress_time => 1, decompress_time => 1)

What keys without a dictionary should get, measured on C<@pairs>: zstd
without a dictionary at levels 3 and 9 and gzip at levels 6 and 9, the one
with least memory that is fast enough. Returns C<method>, C<level>,
C<samples>, C<memory>, C<bytes>, C<savings> (percent of the raw bytes),
C<memGzip_memory> and C<tried> (each with its memory, times and verdict).

=item worth_a_dictionary($tuned, $keys)

C<(1)>, or C<(0, $why)>: whether the choice of a tuning is worth a
dictionary. It must take at least 5 % less memory than the best codec
without one (memGzip, our gzip, zstd, raw) on the held-out values, and,
when the keys are known (C<$keys>, else those the tuning counted), save
more memcached memory over them than the dictionary's own bytes; a
prefix that fails this is one that no size pays for, since the choice
already costs least (C<"no dictionary size pays for itself over its N
keys: ...">).

=item choices_error(methods => \@methods, levels => \@levels)

Why the methods or levels are not ones C<tune> takes (C<methods> of
C<samples>, C<fastcover>, C<cover>; zstd levels other than 0, in the
engine's range), or C<''>.

=item candidate_sizes(sizes => \@sizes, max_size => 112640, training_bytes => $bytes)

C<< { samples => \@sizes, fastcover => \@sizes } >>: the sizes each method
is tried at (cover at two of fastcover's), of C<sizes> (the tuner's own by
default) up to C<max_size>: none larger than the C<training_bytes>, but
the samples method also at the next size up, which holds them all; the
smallest when none fits.

=item best_baseline_memory($baseline)

The least memory of a tuning's codecs without a dictionary (C<memGzip>,
C<gzip>, C<zstd>, C<raw>): what a dictionary must beat.

=item final_bytes($candidate, $tuned)

The bytes a candidate's dictionary takes when trained on every sample, as
the cost counts them.

=item stored_memory($model, \@pairs, \@frame_sizes, threshold => 0)

C<{ memory, bytes, items }> of the values stored as frames of those sizes
(undef: raw), as the clients store them (raw below C<threshold> bytes, or
when the frame is over 0.8 of the value): C<items>, what a memcached of
the model's settings written past its memory with them holds; C<memory>,
the model's C<-m> over those items, times the values; C<bytes>, the
bytes stored.

=item dictionary_memory($model, \@pairs, $dictionary_bytes, $level)

C<stored_memory> of the values compressed with that dictionary (not
loaded) at that level, as a set's writers store them (with
C<fast_options>' threshold for a dictionary).

=back

=head1 SEE ALSO

L<cmrx-dict>, whose every command tunes with this module; the memory each candidate is
ranked by, L<Cache::Memcached::RustXS::Dict::SlabModel>; the training,
L<Cache::Memcached::RustXS::Zstd/train_dictionary_with_parameters(\@samples, %options)>.

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
