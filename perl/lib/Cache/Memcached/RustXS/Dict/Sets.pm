package Cache::Memcached::RustXS::Dict::Sets;

use strict;
use warnings;

use Exporter 5.57 'import';
use File::Spec ();

use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Zstd::DictionarySet ();
use Cache::Memcached::RustXS::Dict qw(fail sum_length round);
use Cache::Memcached::RustXS::Dict::Memory ();
use Cache::Memcached::RustXS::Dict::Sample qw(list_keys fetch_values);
use Cache::Memcached::RustXS::Dict::Tune qw(tune tune_fallback dictionary_memory stored_memory);
use Cache::Memcached::RustXS::Zlib ();
use Cache::Memcached::RustXS::Dict::Report ();

our $VERSION = '0.101';

our @EXPORT_OK = qw(train_all report_set read_dump print_train_all print_report_set json_data
                    worth_a_dictionary whole_cache_samples);

our $DEFAULT_IF_BETTER = 5;    # percent less memory a new dictionary must take

# ---- train --all -----------------------------------------------------------------

sub train_all {
    my (%a) = @_;
    my $dir = $a{dir};
    my $if_better = defined $a{if_better} ? $a{if_better} : $DEFAULT_IF_BETTER;
    my $progress = $a{progress} || sub { };
    my $set = -e File::Spec->catfile($dir, 'manifest')
        ? Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir)
        : Cache::Memcached::RustXS::Zstd::DictionarySet->create($dir);
    my $memory = $a{memory};
    my ($listing, $groups) = _sampled_groups(%a);
    my (@prefixes, @fallback_pool, @all_pairs, @sampled);
    for my $g (@$groups) {
        my $tag = "prefix " . Cache::Memcached::RustXS::Dict::Report::shown($g->{prefix});
        my $pairs = _group_pairs($a{source}, $g, $progress, $tag);
        push @all_pairs, @$pairs;
        push @sampled, { prefix => $g->{prefix}, keys => $g->{keys}, pairs => $pairs };
        my %p = (group => $g, pairs => scalar @$pairs);
        push @prefixes, \%p;
        if (!$g->{delimited}) {
            $p{action} = 'none';
            $p{why} = "keys without the delimiter '$a{delimiter}' have no prefix: they get the fallback";
            push @fallback_pool, @$pairs;
            next;
        }
        my $set_prefix = $g->{prefix} . $a{delimiter};
        $p{set_prefix} = $set_prefix;
        my $id = $set->unused_id;
        my $tuned = tune(samples => $pairs, memory => $memory, id => $id, max_size => $a{max_size},
                         keys => _keys_of($a{source}, $g),
                         compress_time => $a{compress_time}, decompress_time => $a{decompress_time},
                         progress => sub { $progress->("$tag: $_[0]") });
        $p{tuned} = $tuned;
        my ($worth, $why) = worth_a_dictionary($tuned, _keys_of($a{source}, $g));
        my $current = $set->current($set_prefix);
        if ($current) {
            my $bytes = $set->dictionary_bytes($current->{id});
            $p{current} = { %$current, %{ dictionary_memory($memory, $tuned->{held}, $bytes, $current->{level}) } };
        }
        if (!$worth) {
            $p{action} = $current ? 'kept' : 'none';
            $p{why} = $why;
            push @fallback_pool, @$pairs unless $current;
            next;
        }
        if ($current) {
            my $gain = 100 * (1 - $tuned->{choice}{memory} / $p{current}{memory});
            $p{gain_over_current} = round($gain, 1);
            if ($gain < $if_better) {
                $p{action} = 'kept';
                $p{why} = sprintf 'a new dictionary would take %.1f %% %s memory than the current one '
                                . '(ID %d); --if-better is %s %%', abs $gain, ($gain < 0 ? 'more' : 'less'),
                                  $current->{id}, $if_better;
                next;
            }
        }
        my $c = $tuned->{choice};
        my $entry = $set->add(
            prefix => $set_prefix, dictionary => $tuned->{dictionary}, level => $c->{level}, id => $id,
            savings => round(100 * (1 - $c->{bytes} / $tuned->{held_out_bytes}), 1),
            samples => $tuned->{samples},
            memory_savings => round(100 * (1 - $c->{memory} / $tuned->{baseline}{memGzip}{memory}), 1),
            method => $c->{method}, size_asked => $c->{size},
            ($c->{method} eq 'samples' ? () : (k => $c->{k}, d => $c->{d})),
        );
        $p{action} = $current ? 'replaced' : 'added';
        $p{entry} = $entry;
    }
    $progress->('the fallback');
    my $fallback = tune_fallback(samples => @fallback_pool ? \@fallback_pool : \@all_pairs, memory => $memory,
                                 compress_time => $a{compress_time}, decompress_time => $a{decompress_time});
    $fallback->{measured_on} = @fallback_pool ? 'keys without a dictionary' : 'every sampled key';
    $set->set_fallback(method => $fallback->{method}, level => $fallback->{level},
                       savings => $fallback->{savings}, samples => $fallback->{samples});
    # The whole-cache entry, unless --prefix asked for some prefixes only
    # (its samples would not be the cache's).
    my $whole = $a{prefixes} && @{ $a{prefixes} } ? undef
              : _train_whole_cache(\%a, $set, \@sampled, $fallback, @fallback_pool ? \@fallback_pool : \@all_pairs,
                                   $if_better, $progress);
    $set->set_delimiter($a{delimiter}) if defined $a{delimiter} && length $a{delimiter};
    $set->write;
    return { command => 'train --all', dir => $dir, set => $set, listing => $listing, prefixes => \@prefixes,
             fallback => $fallback, if_better => $if_better, memory => $memory, whole_cache => $whole };
}

# ---- the whole-cache entry ---------------------------------------------------------

# The samples of every prefix pooled as memcached holds them: each prefix's
# share of the pool in proportion to its keys (each pooled value stands for
# as many keys as any other), taken evenly from its samples, interleaved in
# key order. Exact proportions take the largest pool that every prefix's
# samples can fill; when that is smaller than the largest prefix's samples,
# the pool is made that large and prefixes that run short give all they
# have. Returns the pool ([key, value] pairs) and each prefix's count.
sub whole_cache_samples {
    my ($groups) = @_;
    my @g = grep { $_->{keys} && @{ $_->{pairs} } } @$groups;
    return ([], {}) unless @g;
    my $total = 0;
    $total += $_->{keys} for @g;
    my ($exact) = sort { $a <=> $b } map { @{ $_->{pairs} } / $_->{keys} } @g;
    my ($most) = sort { $b <=> $a } map { scalar @{ $_->{pairs} } } @g;
    my $scale = $exact * $total >= $most ? $exact : $most / $total;
    my (@placed, %count);
    my $order = 0;
    for my $g (@g) {
        my $pairs = $g->{pairs};
        my $n = int($scale * $g->{keys} + 0.5);
        $n = @$pairs if $n > @$pairs;
        $count{ $g->{prefix} } = $n;
        push @placed, map { [ ($_ + 0.5) / $n, $order, $pairs->[ int(($_ + 0.5) * @$pairs / $n) ] ] } 0 .. $n - 1;
        $order++;
    }
    my @pool = map { $_->[2] } sort { $a->[0] <=> $b->[0] || $a->[1] <=> $b->[1] } @placed;
    return (\@pool, \%count);
}

# Tunes one dictionary and level on the pooled samples of every prefix, for
# writers that cannot see keys (a single Cache::Memcached::Fast object for
# the whole application), and adds it as the entry of the empty prefix when
# it is worth one and better than the current one by $if_better. Decides
# too whether keys of prefixes without a dictionary get it (other_keys=1)
# or the fallback (other_keys=0), by their held-out values' memory.
sub _train_whole_cache {
    my ($a, $set, $sampled, $fallback, $fallback_pool, $if_better, $progress) = @_;
    my $memory = $a->{memory};
    my ($pool, $shares) = whole_cache_samples($sampled);
    my $keys = 0;
    $keys += $_->{keys} for @$sampled;
    my %p = (set_prefix => '', whole_cache => 1, shares => $shares, pairs => scalar @$pool,
             group => { prefix => '', keys => $keys });
    my $current = $set->whole_cache;
    if (@$pool < 2) {
        $p{action} = $current ? 'kept' : 'none';
        $p{why} = 'no values sampled';
        return \%p;
    }
    my $id = $set->unused_id;
    my $tuned = tune(samples => $pool, memory => $memory, id => $id, max_size => $a->{max_size},
                     keys => _keys_of($a->{source}, { keys => $keys }),
                     compress_time => $a->{compress_time}, decompress_time => $a->{decompress_time},
                     progress => sub { $progress->("the whole cache: $_[0]") });
    $p{tuned} = $tuned;
    my ($worth, $why) = worth_a_dictionary($tuned, _keys_of($a->{source}, { keys => $keys }));
    if ($current && @{ $tuned->{held} }) {
        my $bytes = $set->dictionary_bytes($current->{id});
        $p{current} = { %$current, %{ dictionary_memory($memory, $tuned->{held}, $bytes, $current->{level}) } };
    }
    if (!$worth) {
        $p{action} = $current ? 'kept' : 'none';
        $p{why} = $why;
        return \%p;
    }
    if ($current && $p{current}{memory}) {
        my $gain = 100 * (1 - $tuned->{choice}{memory} / $p{current}{memory});
        $p{gain_over_current} = round($gain, 1);
        if ($gain < $if_better) {
            $p{action} = 'kept';
            $p{why} = sprintf 'a new dictionary would take %.1f %% %s memory than the current one '
                            . '(ID %d); --if-better is %s %%', abs $gain, ($gain < 0 ? 'more' : 'less'),
                              $current->{id}, $if_better;
            return \%p;
        }
    }
    my $c = $tuned->{choice};
    my $other = _other_keys($memory, $tuned, $fallback, $fallback_pool);
    $p{other_keys} = $other;
    my $entry = $set->add(
        prefix => '', dictionary => $tuned->{dictionary}, level => $c->{level}, id => $id,
        savings => round(100 * (1 - $c->{bytes} / $tuned->{held_out_bytes}), 1),
        samples => $tuned->{samples},
        memory_savings => round(100 * (1 - $c->{memory} / $tuned->{baseline}{memGzip}{memory}), 1),
        method => $c->{method}, size_asked => $c->{size},
        ($c->{method} eq 'samples' ? () : (k => $c->{k}, d => $c->{d})),
        other_keys => $other->{use} ? 1 : 0,
    );
    $p{action} = $current ? 'replaced' : 'added';
    $p{entry} = $entry;
    return \%p;
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
    my $dict = dictionary_memory($memory, \@held, $c->{dictionary}, $c->{level});
    my @values = map { $_->[1] } @held;
    my $sizes = $fallback->{method} eq 'zstd'
        ? Cache::Memcached::RustXS::Zstd::frame_sizes(\@values, level => $fallback->{level})
        : do { local $Cache::Memcached::RustXS::Zlib::Level = $fallback->{level};
               [ map { length Cache::Memcached::RustXS::Zlib::memGzip($_) } @values ] };
    my $fb = stored_memory($memory, \@held, $sizes);
    return { use => ($dict->{memory} < $fb->{memory} ? 1 : 0), values => scalar @held, measured_on => $on,
             memory => $dict->{memory}, fallback_memory => $fb->{memory} };
}

# Whether a tuned prefix is worth a dictionary (Dict::Tune's rule).
sub worth_a_dictionary { Cache::Memcached::RustXS::Dict::Tune::worth_a_dictionary(@_) }

# The keys a prefix holds, as the tuner counts them: a server's count of
# the prefix's keys; undef for values read from files, which are a sample,
# not the cache.
sub _keys_of {
    my ($source, $g) = @_;
    return $source->isa('Cache::Memcached::RustXS::Dict::Server') ? $g->{keys} : undef;
}

# The listing of the source and its groups, largest (item bytes) first.
sub _sampled_groups {
    my (%a) = @_;
    my $listing = list_keys($a{source}, delimiter => $a{delimiter}, per_prefix => $a{sample},
                            prefixes => $a{prefixes}, progress => $a{listing_progress});
    my @groups = sort { $b->{item_bytes} <=> $a->{item_bytes} || $a->{prefix} cmp $b->{prefix} }
                 values %{ $listing->{groups} };
    return ($listing, \@groups);
}

# [key, value] of a group's sampled values, fetched and decoded.
sub _group_pairs {
    my ($source, $g, $progress, $tag) = @_;
    my $values = fetch_values($source, $g, progress => sub { $progress->("$tag: fetching $_[0]/$_[1]") });
    my $keys = $g->{value_keys};
    return [ map { [ $keys->[$_], $values->[$_] ] } 0 .. $#$values ];
}

# ---- report --dictionaries ---------------------------------------------------------

sub report_set {
    my (%a) = @_;
    my $dir = $a{dir};
    my $if_better = defined $a{if_better} ? $a{if_better} : $DEFAULT_IF_BETTER;
    my $progress = $a{progress} || sub { };
    my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
    # Stored values made with the set's dictionaries decode.
    Cache::Memcached::RustXS::Zstd::load_dictionaries($dir);
    my $memory = $a{memory};
    my ($listing, $groups) = _sampled_groups(%a);
    my (@prefixes, %named, @sampled);
    my %seen_prefix;
    for my $g (@$groups) {
        my $tag = "prefix " . Cache::Memcached::RustXS::Dict::Report::shown($g->{prefix});
        my $pairs = _group_pairs($a{source}, $g, $progress, $tag);
        push @sampled, { prefix => $g->{prefix}, keys => $g->{keys}, pairs => $pairs };
        $named{$_} += $g->{dictionary_ids}{$_} for keys %{ $g->{dictionary_ids} };
        my $set_prefix = $g->{delimited} ? $g->{prefix} . $a{delimiter} : undef;
        $seen_prefix{$set_prefix} = 1 if defined $set_prefix;
        my %p = (group => $g, set_prefix => $set_prefix);
        push @prefixes, \%p;
        my $current = defined $set_prefix ? $set->current($set_prefix) : undef;
        if (!@$pairs) {
            $p{verdict} = 'no values sampled';
            next;
        }
        my $tuned = tune(samples => $pairs, memory => $memory, id => 1, max_size => $a{max_size},
                         keys => _keys_of($a{source}, $g),
                         compress_time => $a{compress_time}, decompress_time => $a{decompress_time},
                         progress => sub { $progress->("$tag: $_[0]") });
        $p{tuned} = $tuned;
        if ($current && @{ $tuned->{held} }) {
            my $bytes = $set->dictionary_bytes($current->{id});
            $p{current} = { %$current, %{ dictionary_memory($memory, $tuned->{held}, $bytes, $current->{level}) } };
        }
        my ($worth, $why) = worth_a_dictionary($tuned, _keys_of($a{source}, $g));
        if (!defined $set_prefix) {
            $p{verdict} = 'the fallback (no prefix)';
        } elsif ($current && $p{current}{memory} && $tuned->{choice}) {
            my $gain = 100 * (1 - $tuned->{choice}{memory} / $p{current}{memory});
            $p{gain_over_current} = round($gain, 1);
            $p{verdict} = $gain >= $if_better ? 'retrain' : 'current';
        } elsif ($current) {
            $p{verdict} = 'current';
            $p{why} = $tuned->{no_dictionary};
        } else {
            $p{verdict} = $worth ? 'train' : 'the fallback';
            $p{why} = $why unless $worth;
        }
    }
    # Prefixes the set has and the sample has not.
    for my $prefix (grep { length } $set->prefixes) {
        next if $seen_prefix{$prefix};
        push @prefixes, { set_prefix => $prefix, verdict => 'no keys sampled', current => $set->current($prefix) };
    }
    my @dictionaries = map {
        +{ %$_, named_by => $named{ $_->{id} } || 0 }
    } $set->entries;
    my %in_set = map { ($_->{id} => 1) } @dictionaries;
    my @strangers = map { +{ id => 0 + $_, named_by => $named{$_} } } grep { !$in_set{$_} } sort { $a <=> $b } keys %named;
    my $whole = $a{prefixes} && @{ $a{prefixes} } ? undef
              : _report_whole_cache(\%a, $set, \@sampled, $if_better, $progress);
    return { command => 'report --dictionaries', dir => $dir, set => $set, listing => $listing,
             prefixes => \@prefixes, dictionaries => \@dictionaries, other_ids => \@strangers,
             if_better => $if_better, memory => $memory, fallback => $set->fallback, whole_cache => $whole };
}

# The whole-cache entry against a fresh one tuned on today's pooled
# samples, as a prefix's: verdict retrain, current, train, the fallback.
sub _report_whole_cache {
    my ($a, $set, $sampled, $if_better, $progress) = @_;
    my $memory = $a->{memory};
    my ($pool, $shares) = whole_cache_samples($sampled);
    my $keys = 0;
    $keys += $_->{keys} for @$sampled;
    my $current = $set->whole_cache;
    my %p = (set_prefix => '', whole_cache => 1, shares => $shares, group => { prefix => '', keys => $keys });
    if (@$pool < 2) {
        $p{verdict} = 'no values sampled';
        $p{current} = $current if $current;
        return \%p;
    }
    my $tuned = tune(samples => $pool, memory => $memory, id => 1, max_size => $a->{max_size},
                     keys => _keys_of($a->{source}, { keys => $keys }),
                     compress_time => $a->{compress_time}, decompress_time => $a->{decompress_time},
                     progress => sub { $progress->("the whole cache: $_[0]") });
    $p{tuned} = $tuned;
    if ($current && @{ $tuned->{held} }) {
        my $bytes = $set->dictionary_bytes($current->{id});
        $p{current} = { %$current, %{ dictionary_memory($memory, $tuned->{held}, $bytes, $current->{level}) } };
    }
    my ($worth, $why) = worth_a_dictionary($tuned, _keys_of($a->{source}, { keys => $keys }));
    if ($current && $p{current}{memory} && $tuned->{choice}) {
        my $gain = 100 * (1 - $tuned->{choice}{memory} / $p{current}{memory});
        $p{gain_over_current} = round($gain, 1);
        $p{verdict} = $gain >= $if_better ? 'retrain' : 'current';
    } elsif ($current) {
        $p{verdict} = 'current';
        $p{why} = $tuned->{no_dictionary};
    } else {
        $p{verdict} = $worth ? 'train' : 'the fallback';
        $p{why} = $why unless $worth;
    }
    return \%p;
}

# ---- dumps: files and standard input holding memcached get responses ---------------

# A source like Dict::Server, over values read from memcached get
# responses (VALUE key flags bytes, the bytes, CRLF; ... END): each_key
# lists them, get_multi returns them.
sub read_dump {
    my ($args) = @_;
    my (%item, @order, $files, $stdin);
    $files = $stdin = 0;
    for my $arg (@$args) {
        my $fh;
        if ($arg eq '-') {
            $fh = \*STDIN;
            $stdin++;
        } else {
            fail("$arg is not a file") if -e $arg && !-f _;
            open $fh, '<', $arg or fail("cannot open $arg: $!");
            $files++;
        }
        binmode $fh;
        my $name = $arg eq '-' ? 'standard input' : $arg;
        my ($end, $n) = (0, 0);
        while (defined(my $line = <$fh>)) {
            if ($line =~ /\AEND\r?\n\z/) { $end = 1; last }
            my ($key, $flags, $len) = $line =~ /\AVALUE (\S+) ([0-9]+) ([0-9]+)(?: [0-9]+)?\r?\n\z/
                or fail("$name: not a memcached get response: '" . substr($line, 0, 80) . "' after $n values");
            my $got = read $fh, my $data, $len + 2;
            defined $got && $got == $len + 2 && substr($data, -2, 2, '') eq "\r\n"
                or fail("$name: the value of $key is cut short");
            push @order, $key unless exists $item{$key};
            $item{$key} = [ 0 + $flags, $data ];
            $n++;
        }
        fail("$name: no END line after its $n values (cut short?)") unless $end;
        close $fh if $arg ne '-';
    }
    return bless { item => \%item, order => \@order, files => $files, stdin => $stdin,
                   spec => join(', ', @$args) }, 'Cache::Memcached::RustXS::Dict::Sets::Dump';
}

package    # values read from files, as a source
    Cache::Memcached::RustXS::Dict::Sets::Dump;

my $ITEM_OVERHEAD = 59;    # header, CAS, NUL and CRLF of an item: its size as metadump lists it, roughly

sub spec { $_[0]{spec} }

sub each_key {
    my ($self, $on_key) = @_;
    for my $key (@{ $self->{order} }) {
        $on_key->($key, length($key) + length($self->{item}{$key}[1]) + $ITEM_OVERHEAD);
    }
    return scalar @{ $self->{order} };
}

sub get_multi {
    my ($self, $keys) = @_;
    return { map { ($_ => $self->{item}{$_}) } grep { $self->{item}{$_} } @$keys };
}

sub close { }

package Cache::Memcached::RustXS::Dict::Sets;

# ---- output ----------------------------------------------------------------------

sub _shown { Cache::Memcached::RustXS::Dict::Report::shown(@_) }
sub _table { Cache::Memcached::RustXS::Dict::Report::table(@_) }

sub print_train_all {
    my ($fh, $r) = @_;
    printf {$fh} "cmrx-dict train --all into %s: %d prefix%s sampled; memory as %s\n", $r->{dir},
        scalar @{ $r->{prefixes} }, (@{ $r->{prefixes} } == 1 ? '' : 'es'), _memory_note($r->{memory});
    my @all = (@{ $r->{prefixes} }, $r->{whole_cache} ? $r->{whole_cache} : ());
    _print_choices($fh, \@all);
    my @rows;
    for my $p (@all) {
        my $e = $p->{entry};
        push @rows, [ _name($p), $p->{action},
                      $e ? ($e->{id}, $e->{file}, $e->{level}, $e->{size}) : ('-') x 4,
                      defined $p->{why} ? $p->{why} : '' ];
    }
    print {$fh} "\nThe set\n";
    _table($fh, [ 'prefix', 'action', 'ID', 'file', 'level', 'bytes', 'why' ], @rows);
    my $f = $r->{fallback};
    printf {$fh} "\nKeys without a dictionary get %s level %d (measured on %d values of %s: %d bytes of memory, "
               . "memGzip's %d)\n", $f->{method}, $f->{level}, $f->{samples}, $f->{measured_on} || 'the sample',
        $f->{memory} || 0, $f->{memGzip_memory} || 0;
    if (my $w = $r->{whole_cache}) {
        printf {$fh} "The whole-cache entry (prefix '', for writers that cannot see keys) was tuned on %d values "
                   . "pooled by each prefix's keys (%s)%s\n", $w->{pairs} || 0, _shares($w->{shares}),
            $w->{other_keys} ? sprintf('; keys of prefixes without a dictionary get %s (%d bytes of memory on %d %s, '
                                       . "the fallback's %d)", ($w->{other_keys}{use} ? 'it' : 'the fallback'),
                                       @{ $w->{other_keys} }{qw(memory values measured_on fallback_memory)}) : '';
    }
    return;
}

sub _name {
    my ($p) = @_;
    return "'' (the whole cache)" if $p->{whole_cache};
    return _shown(defined $p->{set_prefix} ? $p->{set_prefix} : $p->{group}{prefix});
}

sub _shares {
    my ($shares) = @_;
    return join ', ', map { _shown($_) . " $shares->{$_}" } sort { $shares->{$b} <=> $shares->{$a} || $a cmp $b }
                      keys %$shares;
}

# Per prefix: the choice and the alternatives it beat.
sub _print_choices {
    my ($fh, $prefixes) = @_;
    for my $p (@$prefixes) {
        my $t = $p->{tuned} or next;
        my $name = $p->{whole_cache} ? "prefix '' (the whole cache, every prefix pooled)"
                 : "prefix '" . _shown(defined $p->{set_prefix} ? $p->{set_prefix} : $p->{group}{prefix}) . "'";
        my $b = $t->{baseline};
        printf {$fh} "\n%s: %d values sampled (of %d keys), %d trained on, %d held out (%d bytes)\n",
            $name, $t->{samples}, $p->{group}{keys}, $t->{trained_on}, $t->{held_out}, $t->{held_out_bytes} || 0;
        if (!$b) {
            print {$fh} "  no dictionary: $t->{no_dictionary}\n";
            next;
        }
        my @rows = map { [ $_, $b->{$_}{memory}, $b->{$_}{bytes}, _ratio_s($b->{memGzip}{memory}, $b->{$_}{memory}),
                           _us($b->{$_}{us_compress}), _us($b->{$_}{us_decompress}), '' ] }
                   qw(raw memGzip gzip zstd);
        $rows[2][0] = 'gzip (ours)';
        $rows[3][0] = 'zstd -3';
        if ($p->{current}) {
            my $c = $p->{current};
            push @rows, [ "current ID $c->{id}, level $c->{level}", $c->{memory}, $c->{bytes},
                          _ratio_s($b->{memGzip}{memory}, $c->{memory}), '', '', 'the set has it' ];
        }
        my @cands = @{ $t->{candidates} || [] };
        my $shown = 0;
        for my $c (@cands) {
            last if $shown++ >= 8 && $c->{verdict} ne 'chosen';
            push @rows, [ sprintf('%s %d (%d B), level %d', $c->{method}, $c->{size}, $c->{dictionary_bytes}, $c->{level}),
                          $c->{memory}, $c->{bytes}, _ratio_s($b->{memGzip}{memory}, $c->{memory}),
                          _us($c->{us_compress}), _us($c->{us_decompress}), $c->{verdict} ];
        }
        _table($fh, [ 'held out, as', 'memory', 'bytes', 'vs memGzip', 'us compress', 'us decompress', '' ], @rows);
        if (defined $t->{keys} && $t->{choice}) {
            my $c = $t->{choice};
            printf {$fh} "  ranked by memory over the prefix's %d keys plus the dictionary's bytes: the choice %d + %d "
                       . "= %d bytes, without a dictionary %d\n", $t->{keys}, $c->{keys_memory}, $c->{cost_bytes},
                $c->{cost}, $b->{cost};
        }
        print {$fh} "  no dictionary: $t->{no_dictionary}\n" if $t->{no_dictionary};
    }
    return;
}

sub print_report_set {
    my ($fh, $r) = @_;
    printf {$fh} "cmrx-dict report on the dictionary set in %s: %d prefix%s sampled; memory as %s\n", $r->{dir},
        scalar @{ $r->{prefixes} }, (@{ $r->{prefixes} } == 1 ? '' : 'es'), _memory_note($r->{memory});
    my @all = (@{ $r->{prefixes} }, $r->{whole_cache} ? $r->{whole_cache} : ());
    _print_choices($fh, \@all);
    my @rows;
    for my $p (@all) {
        my $c = $p->{current};
        my $choice = $p->{tuned} && $p->{tuned}{choice};
        push @rows, [ _name($p),
                      $c ? "ID $c->{id}, level $c->{level}" : '-',
                      $c && defined $c->{memory} ? $c->{memory} : '-',
                      $choice ? $choice->{memory} : '-',
                      defined $p->{gain_over_current} ? "$p->{gain_over_current} %" : '-',
                      $p->{verdict} . (defined $p->{why} ? ": $p->{why}" : '') ];
    }
    print {$fh} "\nPrefixes (memory of the held-out values; retrain when a fresh dictionary takes at least "
              . "$r->{if_better} % less)\n";
    _table($fh, [ 'prefix', 'current', 'memory', 'fresh', 'fresh saves', 'verdict' ], @rows);
    print {$fh} "\nDictionaries (how many sampled values name each)\n";
    _table($fh, [ 'ID', 'prefix', 'state', 'file', 'named by', '' ],
          (map { [ $_->{id}, (length $_->{prefix} ? _shown($_->{prefix}) : "'' (the whole cache)"), $_->{state}, $_->{file}, $_->{named_by},
                   $_->{named_by} ? '' : 'no sampled value names it' ] } @{ $r->{dictionaries} }),
          (map { [ $_->{id}, '-', 'not in the set', '-', $_->{named_by}, 'load it to read these values' ] }
               @{ $r->{other_ids} }));
    my $f = $r->{fallback};
    printf {$fh} "\nKeys without a dictionary get %s level %d\n", $f->{method}, $f->{level};
    return;
}

sub _memory_note {
    my ($m) = @_;
    return sprintf "memcached's (%s: %s)", $m->classes_from,
        join(' ', ($m->chunk_sizes)[0 .. 5]) . ' ... byte chunks';
}

sub _ratio_s { my ($base, $x) = @_; $x ? sprintf('%.3fx', $base / $x) : '-' }
sub _us { defined $_[0] ? sprintf('%.1f', $_[0]) : '' }

# ---- JSON --------------------------------------------------------------------------

sub json_data {
    my ($r) = @_;
    my @prefixes = map { _prefix_data($_) } @{ $r->{prefixes} };
    my %d = (command => $r->{command}, dir => $r->{dir}, prefixes => \@prefixes, if_better => $r->{if_better},
             fallback => { %{ $r->{fallback} } }, slab_chunk_sizes => [ $r->{memory}->chunk_sizes ],
             classes_from => $r->{memory}->classes_from);
    delete $d{fallback}{tried};
    $d{fallback}{tried} = [ map { my %t = %$_; \%t } @{ $r->{fallback}{tried} } ] if $r->{fallback}{tried};
    $d{dictionaries} = $r->{dictionaries} if $r->{dictionaries};
    $d{other_ids} = $r->{other_ids} if $r->{other_ids};
    $d{set} = [ $r->{set}->entries ];
    if (my $w = $r->{whole_cache}) {
        $d{whole_cache} = _prefix_data($w);
        $d{whole_cache}{shares} = { %{ $w->{shares} || {} } };
        $d{whole_cache}{pooled} = $w->{pairs} if defined $w->{pairs};
        $d{whole_cache}{other_keys} = { %{ $w->{other_keys} } } if $w->{other_keys};
    }
    return \%d;
}

sub _prefix_data {
    my ($p) = @_;
    my $g = $p->{group};
    my %d = (prefix => Cache::Memcached::RustXS::Dict::Report::text(defined $p->{set_prefix} ? $p->{set_prefix} : $g->{prefix}));
    $d{$_} = $p->{$_} for grep { defined $p->{$_} } qw(action verdict why gain_over_current);
    $d{keys} = $g->{keys} if $g;
    $d{entry} = $p->{entry} if $p->{entry};
    if ($p->{current}) {
        $d{current} = { map { ($_ => $p->{current}{$_}) } grep { defined $p->{current}{$_} }
                        qw(id level file memory bytes savings) };
    }
    if (my $t = $p->{tuned}) {
        $d{$_} = $t->{$_} for grep { defined $t->{$_} } qw(samples trained_on training_bytes held_out held_out_bytes
                                                            no_dictionary cost_model);
        $d{keys_counted} = $t->{keys} if defined $t->{keys};
        if (my $b = $t->{baseline}) {
            $d{baseline} = { map { my $x = $b->{$_}; ($_ => { map { defined $x->{$_} ? ($_ => $x->{$_}) : () }
                                                              qw(memory bytes us_compress us_decompress) }) }
                             qw(raw memGzip gzip zstd) };
            $d{baseline}{cost} = $b->{cost} if defined $b->{cost};
        }
        $d{candidates} = [ map { my $c = $_; +{ map { defined $c->{$_} ? ($_ => $c->{$_}) : () }
                                                 qw(method size dictionary_bytes k d level memory bytes
                                                    cost keys_memory cost_bytes
                                                    us_compress us_decompress memGzip_us_compress
                                                    gzip_us_decompress verdict) } }
                           @{ $t->{candidates} || [] } ];
        $d{choice} = $d{candidates}[ (grep { $t->{candidates}[$_]{verdict} eq 'chosen' } 0 .. $#{ $t->{candidates} })[0] ]
            if $t->{choice};
    }
    return \%d;
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Sets - cmrx-dict's dictionary sets: train every prefix worth a dictionary into a set, and report on a set against today's values

=head1 SYNOPSIS

    use File::Temp ();
    use Cache::Memcached::RustXS::Dict::Memory;
    use Cache::Memcached::RustXS::Dict::Sets qw(train_all report_set read_dump print_train_all);

    # Values as a memcached get response (a file of them, or a live server:
    # Cache::Memcached::RustXS::Dict::Server->connect('127.0.0.1:11211'))
    my $dump = File::Temp->new;
    for my $i (1 .. 300) {
        my $v = qq({"id":$i,"name":"user$i","plan":"free","tags":["a","b"],"visits":) . ($i * 7) . '}';
        print {$dump} "VALUE user:$i 0 " . length($v) . "\r\n$v\r\n";
    }
    print {$dump} "END\r\n";
    close $dump;

    my $tmp = File::Temp->newdir;
    my $dir = "$tmp/dictionaries";
    my %common = (source => read_dump(["$dump"]), delimiter => ':', sample => 1000,
                  memory => Cache::Memcached::RustXS::Dict::Memory->new);
    # Without speed limits (0), so that tiny values like these get a
    # dictionary on any machine; the defaults keep each dictionary's
    # compression no slower than memGzip and its decompression faster than
    # our gzip, as measured in the run.
    my $trained = train_all(%common, dir => $dir, compress_time => 0, decompress_time => 0);
    print_train_all(\*STDOUT, $trained);

    my $report = report_set(%common, dir => $dir);
    print "$_->{set_prefix}: $_->{verdict}\n" for @{ $report->{prefixes} };

=head1 DESCRIPTION

C<cmrx-dict train --all> and C<cmrx-dict report --dictionaries> (the
manual, F<cmrx-dict.pod>, describes both). Values come from a source: a
L<Cache::Memcached::RustXS::Dict::Server>, or L</read_dump(\@files)>'s
values read from files. Keys are grouped by prefix and sampled as
L<Cache::Memcached::RustXS::Dict::Sample> does; each prefix is tuned by
L<Cache::Memcached::RustXS::Dict::Tune>, in the memory terms of a
L<Cache::Memcached::RustXS::Dict::Memory>; the set is a
L<Cache::Memcached::RustXS::Zstd::DictionarySet>.

=head1 FUNCTIONS

=over 4

=item train_all(dir => $dir, source => $source, delimiter => ':', sample => 1000, memory => $model, if_better => 5, max_size => 112640, compress_time => 1, decompress_time => 1, prefixes => \@prefixes, progress => sub { }, listing_progress => sub { })

Reads the set in C<$dir> (or makes a new one), tunes every prefix of the
source (the group of keys without the delimiter only feeds the fallback),
and adds the chosen dictionary of each prefix worth one. Read from a
server, each prefix is tuned with its key count (the dictionary's bytes
in the cost: L<Cache::Memcached::RustXS::Dict::Tune/DESCRIPTION>); from
files, without. A prefix is worth a dictionary when the choice takes at
least 5 % less memory than the best codec without a dictionary (memGzip,
our gzip, zstd, raw) on the held-out values and, read from a server,
saves over the prefix's keys more memcached memory than its own size;
since the choice costs least, a prefix refused so is one that no size
pays for. A prefix that has a current
dictionary gets the new one only when it takes at least C<if_better> % less
memory than the current one on the same held-out values; the one before is
retired, never removed, and no file is removed. New dictionaries get the
smallest unused ID of the set. The fallback (what keys without a dictionary
get) is measured on the values of the prefixes left without one (on every
value when all have one). Then the whole-cache entry (the empty prefix),
unless C<prefixes> is given: the sampled values of every group, pooled by
L</whole_cache_samples(\@groups)>, tuned by the same
L<Cache::Memcached::RustXS::Dict::Tune/tune>, and added by the same rules
(worth a dictionary over every key; C<if_better> against the current
one), with C<other_keys> 1 when its candidate dictionary takes less memory
than the fallback on the held-out pooled values of the keys the fallback
was measured on (all the fallback's values when none was held out), else
0. The delimiter is recorded on the set line. The set is written, and a
hash reference returned: C<dir>, C<set>, C<listing>, C<prefixes> (per
prefix: C<group>, C<set_prefix>, C<tuned>
(L<Cache::Memcached::RustXS::Dict::Tune/tune>'s result), C<current>,
C<action> (C<added>, C<replaced>, C<kept>, C<none>), C<why>, C<entry>),
C<fallback>, and C<whole_cache> (the same for the whole-cache entry, with
C<whole_cache> 1, C<set_prefix> C<''>, C<shares> (each prefix's values in
the pool), C<pairs> (the pool's size) and C<other_keys> (C<use>,
C<memory>, C<fallback_memory>, C<values>, C<measured_on>); undef with
C<prefixes>).

=item report_set(dir => $dir, ...)

The same options (no C<if_better> effect on the set: nothing is written).
Loads the set's dictionaries, samples the source, and for every prefix
sampled tunes a fresh dictionary and measures the current one on the same
held-out values. Per prefix, C<verdict>: C<retrain> (the fresh one takes at
least C<if_better> % less memory), C<current>, C<train> (no dictionary yet,
and one is worth it), C<the fallback>, C<no values sampled>, or, for a
prefix of the set that no sampled key has, C<no keys sampled>. Per
dictionary of the set, C<named_by>: how many sampled stored values are
frames naming its ID (C<other_ids> lists IDs that the set does not have).
C<whole_cache>: the whole-cache entry measured the same way against a fresh
one tuned on the pooled values of every prefix, with C<verdict>
(C<retrain>, C<current>, C<train>, C<the fallback>, C<no values sampled>);
undef with C<prefixes>.

=item whole_cache_samples(\@groups)

The pool the whole-cache entry is tuned on, and each prefix's share:
C<(\@pairs, { prefix =E<gt> count })>, from groups C<{ prefix, keys,
pairs =E<gt> [ [$key, $value], ... ] }> (C<keys>: the prefix's keys on the
server, or its values in the files). Each prefix gives values in proportion
to its keys, so that each pooled value stands for as many keys as any
other, taken evenly from its pairs and interleaved with the others' in
order. The pool is the largest for which every prefix has enough values
for its exact share; when that is smaller than the largest prefix's pairs,
it is made that large and a prefix short of values gives all it has.

=item read_dump(\@files)

A source of the values in the files (C<-> is standard input), each a
memcached get response: C<VALUE key flags bytes>, the bytes and CRLF, ...,
C<END>, as a C<get> returns them (and as F<bench/data/values> holds them).
Fails on anything else, and on a file cut short.

=item print_train_all($fh, $result), print_report_set($fh, $result), json_data($result)

The results as text (per prefix the held-out memory of the baselines, the
choice and the alternatives it beat, then the set or the verdicts) or as
data for JSON.

=item worth_a_dictionary($tuned, $keys)

C<(1)> or C<(0, $why)>, by the rule above
(L<Cache::Memcached::RustXS::Dict::Tune/worth_a_dictionary($tuned, $keys)>);
C<$keys> undefined (samples read from files, which are not the cache)
skips the rule of the keys unless the tuning counted keys.

=back

=head1 SEE ALSO

L<cmrx-dict>, L<Cache::Memcached::RustXS::Dict::Tune>,
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
