package Cache::Memcached::RustXS::Zstd;

use strict;
use warnings;

use Carp ();
use Exporter 5.57 'import';
use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Zstd::DictionarySet ();
use Time::HiRes ();

our $VERSION = '1.000';

our @EXPORT_OK = qw(load_dictionary load_dictionaries train_dictionary train_dictionary_with_parameters
                    frame_sizes compress decompress compress_methods dictionary_id dictionary_with_id
                    frame_dictionary_id
                    fast_options counters);
our %EXPORT_TAGS = (all => \@EXPORT_OK);

# Warnings about a prefix or a namespace point at the code that made the
# writer, past Cache::Memcached::RustXS::Memcached's new.
our @CARP_NOT = ('Cache::Memcached::RustXS::Memcached');

# compress, decompress, dictionary_id, dictionary_with_id and frame_dictionary_id are XSUBs
# (perl/RustXS.xs), as are the helpers _load_dictionary_bytes,
# _prepare_dictionary, _loaded_state, _train and _frame_sizes.

# The numbers this module shares with the XS and the engine, from them: the
# training methods' codes, zstd's default level, what _rescan_for says.
my %SHARED = Cache::Memcached::RustXS::_constants();

sub load_dictionary {
    my ($path) = @_;
    Carp::croak('load_dictionary: the path of a zstd dictionary file is needed')
        unless defined $path && length $path;
    open my $fh, '<', $path or Carp::croak("load_dictionary: cannot open $path: $!");
    binmode $fh;
    my $bytes = do { local $/; <$fh> };
    Carp::croak("load_dictionary: cannot read $path: $!") unless defined $bytes;
    close $fh;
    my $id = eval { _load_dictionary_bytes($bytes) };
    Carp::croak("load_dictionary: $path: " . Cache::Memcached::RustXS::_error_message($@)) unless defined $id;
    return $id;
}

my $DEFAULT_DICTIONARY_SIZE = 16 * 1024;

# The training methods by name, with their codes (the engine's) and the
# segment sizes they try by default.
my %TRAIN_METHOD = (
    fastcover => { code => $SHARED{TRAIN_FASTCOVER}, steps => 4 },
    cover     => { code => $SHARED{TRAIN_COVER},     steps => 4 },
    samples   => { code => $SHARED{TRAIN_SAMPLES},   steps => 0 },
);
my @TRAIN_OPTIONS = qw(size method k d steps level id);

sub train_dictionary {
    my ($samples, %opt) = @_;
    my ($dictionary) = _train_as_asked('train_dictionary', $samples, \%opt);
    return $dictionary;
}

sub train_dictionary_with_parameters {
    my ($samples, %opt) = @_;
    return _train_as_asked('train_dictionary_with_parameters', $samples, \%opt);
}

# (dictionary bytes, { the parameters used }), or a croak from $who.
sub _train_as_asked {
    my ($who, $samples, $opt) = @_;
    Carp::croak("$who: the samples must be an array reference")
        unless ref $samples eq 'ARRAY';
    Cache::Memcached::RustXS::_check_options($who, $opt, @TRAIN_OPTIONS);
    my %how = (size => $DEFAULT_DICTIONARY_SIZE, method => 'fastcover',
               level => $SHARED{ZSTD_DEFAULT_LEVEL}, k => 0, d => 0, id => 0, %$opt);
    my $method = $TRAIN_METHOD{ defined $how{method} ? $how{method} : '' }
        or Carp::croak("$who: method must be fastcover, cover or samples, not "
                       . (defined $how{method} ? $how{method} : 'undef'));
    $how{steps} = $method->{steps} unless defined $how{steps};
    Carp::croak("$who: size must be a number of bytes")
        unless defined $how{size} && $how{size} =~ /\A[0-9]+\z/;
    for my $name (qw(k d steps id)) {
        Carp::croak("$who: $name must be a whole number")
            unless defined $how{$name} && $how{$name} =~ /\A[0-9]+\z/;
    }
    Carp::croak("$who: level must be a whole number")
        unless defined $how{level} && $how{level} =~ /\A-?[0-9]+\z/;
    my @trained = eval {
        _train($samples, $how{size}, $method->{code}, @how{qw(k d steps level id)});
    };
    if (!@trained) {
        (my $why = Cache::Memcached::RustXS::_error_message($@)) =~ s/\Atrain_dictionary: /$who: /;
        Carp::croak($why);
    }
    return ($trained[0], { method => $how{method}, k => $trained[1], d => $trained[2],
                           steps => 0 + $how{steps}, level => 0 + $how{level}, id => 0 + $how{id},
                           size => 0 + $how{size} });
}

sub frame_sizes {
    my ($values, %opt) = @_;
    Carp::croak('frame_sizes: the values must be an array reference')
        unless ref $values eq 'ARRAY';
    Cache::Memcached::RustXS::_check_options('frame_sizes', \%opt, qw(level dictionary));
    my $level = defined $opt{level} ? $opt{level} : 0;
    Carp::croak('frame_sizes: level must be a whole number')
        unless $level =~ /\A-?[0-9]+\z/;
    my $sizes = eval { _frame_sizes($opt{dictionary}, $level, $values) };
    Carp::croak(Cache::Memcached::RustXS::_error_message($@)) unless $sizes;
    return $sizes;
}


# ---- dictionary sets -------------------------------------------------------

my $DEFAULT_RESCAN_INTERVAL = 60;

# Seconds between two warnings of the same kind about the same thing (a
# set that cannot be read again, a dictionary that is not loaded).
our $WarnInterval;    # its default is the engine's (60), set when the engine loads

# The sets this process loaded, by folder: { dir, identity, interval,
# next_scan (epoch seconds), manifest (its SHA-256 when last loaded), set }.
my %SETS;
my %LOADED_SHA256; # SHA-256 of each dictionary loaded from a set, by ID
# A rescan runs: perl code it runs (a warn handler, a reader in it) gets no
# other. The one guard of the rescan, the XS's readers' too.
our $RESCANNING;
# Whether loading a set prepares each dictionary for writing at once, as a
# preforking server wants (PREFORKING SERVERS), or at its first value
# written. Off only for cmrx-dict, which reads sets of hundreds of
# dictionaries and writes with one per process at most: prepared, each
# would take its zstd compression tables (1.6 MB for 64 KiB at level 12).
our $PREPARE_ON_LOAD = 1;

# The time a set's readers and writers go by: DictionarySet's clock (which
# tests move).
sub _now { Cache::Memcached::RustXS::Zstd::DictionarySet::State::now() }

sub load_dictionaries {
    my ($dir, %opt) = @_;
    Carp::croak('load_dictionaries: the folder of a dictionary set is needed')
        unless defined $dir && length $dir;
    Cache::Memcached::RustXS::_check_options('load_dictionaries', \%opt, 'rescan_interval');
    my $interval = exists $opt{rescan_interval} ? $opt{rescan_interval} : $DEFAULT_RESCAN_INTERVAL;
    Carp::croak('load_dictionaries: rescan_interval must be a number of seconds')
        unless defined $interval && $interval =~ /\A(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\z/;
    my $known = $SETS{$dir};
    my $loaded = eval { _load_set($dir, $known ? $known->{identity} : undef) };
    Carp::croak("load_dictionaries: " . Cache::Memcached::RustXS::_error_message($@)) unless $loaded;
    $SETS{$dir} = { %$loaded, dir => $dir, interval => $interval,
                    next_scan => _now() + $interval };
    return $loaded->{set};
}

# Reads the set in $dir (of identity $identity, if defined), checks every
# dictionary file, then loads them and prepares each at its level. Dies
# before loading anything when a file is bad or an ID is taken by another
# dictionary. A writer that replaces the manifest meanwhile (and removes a
# file the old one named) makes it read again, a few times.
my $READ_ATTEMPTS = 3;

sub _load_set {
    my ($dir, $identity) = @_;
    my ($set, %bytes, $err);
    for my $attempt (1 .. $READ_ATTEMPTS) {
        $set = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
        if (defined $identity && $set->identity ne $identity) {
            die "$dir now holds another dictionary set (identity " . $set->identity
              . ", loaded before: $identity); not mixing the two: restart the process to load it\n";
        }
        %bytes = ();
        last if eval {
            for my $e ($set->for_readers) {
                my $state = _loaded_state($e->{id}, '');
                # A dictionary loaded already with the bytes the manifest
                # names needs no reading.
                next if $state ne 'not_loaded' && _loaded_sha256($e->{id}) eq $e->{sha256};
                $bytes{ $e->{id} } = $set->dictionary_bytes($e->{id});
                die 'dictionary ID ' . $e->{id} . ' of ' . $set->path_of($e->{id})
                  . " is taken by another dictionary loaded in this process (another set's?)\n"
                    if _loaded_state($e->{id}, $bytes{ $e->{id} }) eq 'different';
            }
            1;
        };
        $err = $@;
        my $now = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
        die $err if $now->_manifest_sha256 eq $set->_manifest_sha256 || $attempt == $READ_ATTEMPTS;
    }
    for my $e ($set->for_readers) {
        if (exists $bytes{ $e->{id} }) {
            my $id = eval { _load_dictionary_bytes($bytes{ $e->{id} }) };
            die $set->path_of($e->{id}) . ': ' . Cache::Memcached::RustXS::_error_message($@) . "\n" unless defined $id;
            $LOADED_SHA256{$id} = $e->{sha256};
        }
        _prepare_dictionary($e->{id}, $e->{level}) if $PREPARE_ON_LOAD;
    }
    return { set => $set, identity => $set->identity, manifest => $set->_manifest_sha256 };
}

sub _loaded_sha256 {
    my ($id) = @_;
    return defined $LOADED_SHA256{$id} ? $LOADED_SHA256{$id} : '';
}

# What _rescan_for says to the XS, in its numbers.
my ($RESCAN_ABSENT, $RESCAN_FOUND, $RESCAN_NOT_DUE) = @SHARED{qw(RESCAN_ABSENT RESCAN_FOUND RESCAN_NOT_DUE)};

# The one sub of this distribution the XS calls (by this name): when a
# frame names dictionary $id, which is not loaded, it scans the loaded sets whose interval has passed, and says whether
# $id is loaded now ($RESCAN_FOUND), or not and a set is not due for a scan
# yet ($RESCAN_NOT_DUE: the reader does not warn yet), or not at all. Never
# dies (the XS calls it in an eval anyway).
sub _rescan_for {
    my ($id) = @_;
    return $RESCAN_ABSENT if $RESCANNING || !%SETS;
    local $RESCANNING = 1;
    my $now = _now();
    my $pending = 0;
    for my $dir (sort keys %SETS) {
        $pending = 1 unless _rescan_if_due($dir, $now);
    }
    return $RESCAN_FOUND if _loaded_state($id, '') ne 'not_loaded';
    return $pending ? $RESCAN_NOT_DUE : $RESCAN_ABSENT;
}

# Reads the set in $dir again when its interval has passed since the last
# scan, and loads what it added; false when the scan was not due yet. A set
# that cannot be read keeps the dictionaries loaded before, with a warning
# that the engine lets through at most once per $WarnInterval.
my $UNREADABLE_RESCANS = 0;    # rescans that found a set they could not read

sub _rescan_if_due {
    my ($dir, $now) = @_;
    my $s = $SETS{$dir};
    return 0 if $now < $s->{next_scan};
    $s->{next_scan} = $now + $s->{interval};
    my $loaded = eval { _load_set($dir, $s->{identity}) };
    if ($loaded) {
        @$s{qw(set manifest)} = @$loaded{qw(set manifest)};
        return 1;
    }
    (my $why = Cache::Memcached::RustXS::_error_message($@)) =~ s/\n\z//;
    $UNREADABLE_RESCANS++;
    my $warning = "Cache::Memcached::RustXS::Zstd: rescanning the dictionary set in $dir: $why; "
                . "the dictionaries loaded before stay\n";
    warn $warning if Cache::Memcached::RustXS::_report_due($warning, $now);
    return 1;
}

# ---- counters ----------------------------------------------------------------

# The counters' names, by the engine's codes (cmrx.h, through _constants).
my %TRAFFIC_NAME = ($SHARED{TRAFFIC_ZSTD} => 'zstd', $SHARED{TRAFFIC_GZIP} => 'gzip',
                    $SHARED{TRAFFIC_ZLIB} => 'zlib');
my %EVENT_GROUP = (
    misses   => [qw(unknown_dictionary undecodable too_big)],
    declined => [qw(already_compressed incompressible too_small)],
);
my @TRAFFIC_FIELDS = map { my $way = $_; map { [ $way, $_ ] } qw(values raw_bytes stored_bytes) } qw(written read);

sub counters {
    Carp::croak('counters takes no arguments') if @_;
    my ($rows, $events) = Cache::Memcached::RustXS::_counters();
    my %counters = (dictionaries => {}, sets => { unreadable_rescans => $UNREADABLE_RESCANS });
    for my $row (@$rows) {
        my ($kind, $id, @counts) = @$row;
        my %traffic;
        $traffic{ $_->[0] }{ $_->[1] } = shift @counts for @TRAFFIC_FIELDS;
        if ($kind == $SHARED{TRAFFIC_ZSTD_DICTIONARY}) { $counters{dictionaries}{$id} = \%traffic }
        else                                            { $counters{ $TRAFFIC_NAME{$kind} } = \%traffic }
    }
    for my $group (sort keys %EVENT_GROUP) {
        $counters{$group}{$_} = $events->[ $SHARED{ 'EVENT_' . uc $_ } ] for @{ $EVENT_GROUP{$group} };
    }
    return \%counters;
}

# ---- compress_methods ------------------------------------------------------

my @METHOD_OPTIONS = qw(level dictionary dictionaries prefix rescan_interval max_output compress_ratio);

sub compress_methods {
    my %opt = @_;
    Cache::Memcached::RustXS::_check_options('compress_methods', \%opt, @METHOD_OPTIONS);
    # The decompressor's cap, and the most the compressor keeps.
    my @limits = (exists $opt{max_output} ? $opt{max_output} : Cache::Memcached::RustXS::_max_decoded_size(),
                  $opt{compress_ratio});
    return _set_methods(\%opt, \@limits) if defined $opt{dictionaries};
    for my $name (qw(prefix rescan_interval)) {
        Carp::croak("compress_methods: $name goes with dictionaries") if exists $opt{$name};
    }
    my $id = defined $opt{dictionary} ? load_dictionary($opt{dictionary}) : 0;
    return _xs_methods('zstd', $opt{level}, $id, \@limits);
}

# The engine's pair of XSUBs writing $format at $level with dictionary $id,
# within @$limits (max_output, compress_ratio).
sub _xs_methods {
    my ($format, $level, $id, $limits) = @_;
    my $methods = eval { Cache::Memcached::RustXS::_compress_methods($format, $level, $id, @$limits) };
    Carp::croak(Cache::Memcached::RustXS::_error_message($@)) unless $methods;
    return $methods;
}

# compress_methods(dictionaries => DIR, prefix => P): the pair whose
# compressor follows the set while the process runs. What it writes with
# is decided again when the set is due for a rescan or a staged dictionary
# starts, never between: a time check per value.
sub _set_methods {
    my ($opt, $limits) = @_;
    my $writer = _set_writer($opt);
    $writer->{limits} = $limits;
    my ($methods, $until) = _writer_methods($writer);
    my $compress = $methods->[0];
    my $following = sub {
        if (_now() >= $until && !$RESCANNING) {
            # Never dies: a writer keeps what it wrote with when the set
            # cannot be read (_rescan_if_due has warned).
            my ($now_methods, $now_until) = eval { _writer_methods($writer) };
            ($compress, $until) = ($now_methods->[0], $now_until) if $now_methods;
        }
        goto &$compress;
    };
    return [ $following, $methods->[1] ];
}

# What a set's writer writes with now (the engine's pair of XSUBs), and
# until when that holds.
sub _writer_methods {
    my ($writer) = @_;
    my ($set, $now, $until) = _followed_set($writer->{dir});
    return (_xs_methods(_writer_choice($writer, $set, $now), $writer->{limits}), $until);
}

# The set loaded from $dir as it is now (read again when its rescan is
# due), the time, and until when what its writers use holds: its next
# rescan or the next start of a staged dictionary, whichever comes first.
sub _followed_set {
    my ($dir) = @_;
    my $now = _now();
    my $s = $SETS{$dir} or Carp::croak("no dictionary set is loaded from $dir");
    {
        local $RESCANNING = 1;
        _rescan_if_due($dir, $now);
    }
    my $next = $s->{set}->next_change(at => $now);
    return ($s->{set}, $now, defined $next && $next < $s->{next_scan} ? $next : $s->{next_scan});
}

# What compress_methods(dictionaries => DIR, prefix => P) writes with:
# { dir, prefix }, after loading the set and checking the options.
sub _set_writer {
    my ($opt) = @_;
    for my $name (qw(dictionary level)) {
        Carp::croak("compress_methods: $name cannot go with dictionaries (the set says which and at what level)")
            if exists $opt->{$name};
    }
    my $set = load_dictionaries($opt->{dictionaries},
        exists $opt->{rescan_interval} ? (rescan_interval => $opt->{rescan_interval}) : ());
    if (!defined $opt->{prefix} && !grep { !length $_->{prefix} } $set->entries) {
        Carp::croak("compress_methods: the dictionary set in $opt->{dictionaries} has no whole-cache entry "
                  . "(a current or staged dictionary for the prefix ''), which a writer without prefix uses: give "
                  . 'prefix (the key prefix the values have), or train the set again with cmrx-dict train --all');
    }
    my $writer = { dir => $opt->{dictionaries}, prefix => $opt->{prefix} };
    _writer_choice($writer, $set, _now(), 'warn');
    return $writer;
}

# (format, level, dictionary ID) that $writer writes with at $now: the
# current entry of its prefix (without a prefix: the whole-cache entry),
# else the set's fallback. With $warn, says once when the prefix matches
# no dictionary.
sub _writer_choice {
    my ($writer, $set, $now, $warn) = @_;
    my $entry;
    if (!defined $writer->{prefix}) {
        $entry = $set->whole_cache(at => $now);
    }
    else {
        my $r = $set->resolve_prefix($writer->{prefix}, at => $now);
        $entry = $r->{entry};
        _warn_unmatched('compress_methods: prefix', $writer->{prefix}, $set, $entry)
            if $warn && $r->{how} eq 'none' && !_matches_later($set, $writer->{prefix}, $now);
    }
    return ('zstd', $entry->{level}, $entry->{id}) if $entry;
    my $fallback = $set->fallback;
    return ($fallback->{method}, $fallback->{level}, 0);
}

# Whether a dictionary staged in $set for after $now will match $prefix:
# a writer that gets the fallback only until then is not warned about.
sub _matches_later {
    my ($set, $prefix, $now) = @_;
    for (my $at = $set->next_change(at => $now); defined $at; $at = $set->next_change(at => $at)) {
        return 1 if $set->resolve_prefix($prefix, at => $at)->{how} ne 'none';
    }
    return 0;
}

# Warns, once per set folder and prefix in the process, that $prefix (a
# compress_methods prefix, a Cache::Memcached namespace) matches no
# dictionary of $set, naming the set's prefixes and what its values get.
my %WARNED_PREFIX;
sub _warn_unmatched {
    my ($what, $prefix, $set, $entry) = @_;
    return if $WARNED_PREFIX{ $set->dir }{$prefix}++;
    my @prefixes = map { "'" . Cache::Memcached::RustXS::_printable($_) . "'" } grep { length } $set->prefixes;
    my $whole = $set->whole_cache;
    my $fallback = $set->fallback;
    Carp::carp("$what '" . Cache::Memcached::RustXS::_printable($prefix) . "' matches no dictionary of the set in " . $set->dir
             . ' (its prefixes: ' . (@prefixes ? join(', ', @prefixes) : 'none')
             . ($whole ? ", and '' for the whole cache" : '') . '): its values get '
             . ($entry ? "the whole-cache dictionary (ID $entry->{id}, level $entry->{level})"
                       : "the fallback ($fallback->{method} level $fallback->{level})"));
    return;
}

# ---- fast_options -----------------------------------------------------------

# fast_options' compress_threshold: values shorter than this are stored raw.
# The sizes from which more than half of the values of bench/data/values cut
# to that size land in a smaller slab chunk (under Fast's default
# compress_ratio; bench/threshold.pl): 208 bytes for zstd alone (at 128, 3
# to 22 % do), 64 with a dictionary of their kind (at 48, 38 to 50 %).
my $FAST_THRESHOLD            = 208;
my $FAST_THRESHOLD_DICTIONARY = 64;

# fast_options' threshold for a writer with a dictionary (true) or without:
# cmrx-dict's forecasts of what a writer stores take it from here.
sub _fast_threshold {
    my ($with_dictionary) = @_;
    return $with_dictionary ? $FAST_THRESHOLD_DICTIONARY : $FAST_THRESHOLD;
}

sub fast_options {
    my %opt = @_;
    my $threshold = _fast_threshold(defined $opt{dictionary} || defined $opt{dictionaries});
    my ($settings, $ratio) = Cache::Memcached::RustXS::_fast_settings('fast_options', \%opt, $threshold,
                                                                     @METHOD_OPTIONS);
    return (@$settings, compress_methods => compress_methods(%opt, compress_ratio => $ratio));
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Zstd - zstd with trained dictionaries for memcached values: 2.24 times the items in the same memcached

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Zstd qw(train_dictionary load_dictionary load_dictionaries
                                          compress decompress);

    # Once, offline: a dictionary from values of one kind (or cmrx-dict train)
    my @samples = map { qq({"id":$_,"name":"user$_","plan":"free","tags":["a","b"]}) } 1 .. 500;
    my $dict = train_dictionary(\@samples, size => 16384);
    open my $fh, '>', 'users.dict' or die $!;
    binmode $fh;
    print {$fh} $dict;
    close $fh or die $!;

    # At startup of every process that reads or writes such values
    my $id = load_dictionary('users.dict');

    my $frame = compress('{"id":7,"name":"user7","plan":"free","tags":["a","b"]}',
                         level => 3, dictionary => $id);
    my $json  = decompress($frame);    # undef for anything it cannot decode

    # Cache::Memcached::Fast: writes zstd, reads zstd, gzip and zlib;
    # fast_options gives compress_threshold (64 with a dictionary) and
    # compress_methods, as Fast compresses nothing without a threshold
    use Cache::Memcached::Fast;
    my $fast = Cache::Memcached::Fast->new({
        servers => ['127.0.0.1:11211'],
        Cache::Memcached::RustXS::Zstd::fast_options(level => 3, dictionary => 'users.dict'),
    });

    # Cache::Memcached: one object that writes zstd, and reads it
    use Cache::Memcached::RustXS::Memcached;
    my $memd = Cache::Memcached::RustXS::Memcached->new({
        servers            => ['127.0.0.1:11211'],
        compress_threshold => 100,
        zstd               => { level => 3, dictionary => 'users.dict' },
    });

    # A dictionary set: a dictionary per key prefix, with its level, in a
    # folder (cmrx-dict train --all writes one; see DictionarySet)
    use Cache::Memcached::RustXS::Zstd::DictionarySet;
    my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->create('/tmp/cmrx-set-' . $$);
    $set->add(prefix => 'user:', dictionary => $dict, level => 9, id => 1);
    $set->write;

    # Every process, before it forks its workers: all of them loaded and
    # prepared; dictionaries added to the set later are found when a value
    # names one, without a restart
    load_dictionaries($set->dir, rescan_interval => 60);

    # One Fast object per namespace: it writes with its prefix's dictionary
    my $users = Cache::Memcached::Fast->new({
        servers   => ['127.0.0.1:11211'],
        namespace => 'user:',
        Cache::Memcached::RustXS::Zstd::fast_options(dictionaries => $set->dir, prefix => 'user:'),
    });

    # One Fast object for the whole application, the prefix in each key: it
    # writes with the set's whole-cache entry (the prefix '', which
    # cmrx-dict train --all tunes on every prefix's values)
    $set = Cache::Memcached::RustXS::Zstd::DictionarySet->read($set->dir);
    $set->add(prefix => '', dictionary => $dict, level => 9, id => 2);
    $set->write;
    my $app = Cache::Memcached::Fast->new({
        servers => ['127.0.0.1:11211'],
        Cache::Memcached::RustXS::Zstd::fast_options(dictionaries => $set->dir),
    });

=head1 DESCRIPTION

Cache values are mostly small JSON documents and HTML fragments, and gzip
does little for them: each value is compressed alone, with no context
shared with the others. A zstd dictionary trained on values of the same kind
is that shared context. In memcached's own terms: a 64 MB memcached holds
2.24 times the items that Cache::Memcached::Fast's default gzip leaves it
(see L</PERFORMANCE> for each kind of value alone), for the JSON values of
this distribution's benchmark corpus, with the dictionary set that
C<cmrx-dict train --all> tunes unaided (a dictionary and a level per key
prefix); compressing them is faster than Compress::Zlib's C<memGzip> and
decompressing them 3.2 times as fast as our gzip (see L</PERFORMANCE>). In
bytes, values of one schema (JSON records, API responses, templated HTML)
take 0.36 to 0.43 of gzip's with one 16 KiB dictionary, prose 0.67 to 0.71.

Values are stored as standard zstd frames, flagged as compressed
(C<F_COMPRESS>, 2) as gzip values are, so the rule "compress only if it
saves enough" of both clients applies as before (Cache::Memcached: 20 %;
Cache::Memcached::Fast: C<compress_ratio>). Each frame names the ID of its
dictionary; a reader finds the dictionary by that ID among the ones loaded
in its process. Any zstd tool reads the frames (C<zstd -d -D DICT>).

=head1 FUNCTIONS

Nothing is exported by default; ask for any of the names below, or C<:all>.

=over 4

=item load_dictionary($path)

Loads a standard zstd dictionary file (as C<zstd --train>, L</train_dictionary(\@samples, size =E<gt> 16384)>
or C<cmrx-dict train> write them) for the whole process: from then on every
reader in the process (L</decompress($frame)>, GetParser, the methods of
L</compress_methods(level =E<gt> 3, dictionary =E<gt> $path, max_output =E<gt> 64 MiB)> and Zlib's) decodes frames that name its ID. Returns the
ID. Loading the same file again does nothing more; a different dictionary
with the same ID croaks, as do a file that cannot be read and one that is
not a zstd dictionary. Dictionaries stay loaded for the life of the process
(557 KiB for a 16 KiB dictionary once it has been used at level 3, 477 KiB
at level 9, by F<bench/dict-memory.pl>).

=item load_dictionaries($dir, rescan_interval => 60)

Loads every dictionary of the dictionary set in the folder C<$dir> (see
L<Cache::Memcached::RustXS::Zstd::DictionarySet>), current and retired, for
the whole process, as L</load_dictionary($path)> does for one file, and
prepares each for writing at the level the set gives it, now rather than at
its first use: a preforking server that loads its sets before it forks
shares the prepared dictionaries with every worker (see L</PREFORKING
SERVERS>). Returns the set (a DictionarySet object).

It checks everything before it loads anything, and croaks, loading
nothing, when the manifest is missing, malformed, truncated, of a newer
format, or lists two dictionaries with one ID; when a dictionary file is
missing, truncated, or replaced (its size or SHA-256 differ from the
manifest's: another set's file, say); and when a dictionary's ID is taken
by a different dictionary the process has loaded already.

The set is read again while the process runs, by its writers and when a
reader meets a frame whose dictionary is not loaded, each at most once
per C<rescan_interval> seconds (60 by default; a fraction is fine; 0
reads it at every such frame); only what is new is read. When, and what
a rescan that fails does (it keeps what was loaded, warns, and counts it
under L</counters()>'s C<sets>):
L<Cache::Memcached::RustXS::Zstd::DictionarySet/What a process loads, and when>.
The warning about a missing dictionary comes when the ID is still
unknown after a rescan.

Calling it again for the same folder reads it at once, and sets its
interval anew.

=item dictionary_id($bytes)

The ID of the zstd dictionary C<$bytes>, once the engine has checked that
it can load it; croaks if it cannot. Loads nothing.

=item dictionary_with_id($bytes, $id)

A copy of the zstd dictionary C<$bytes> that names dictionary ID C<$id> (1
to 4294967295) instead of its own: frames made with it name C<$id>, which
takes 1 byte in each frame up to 255, 2 up to 65535, else 4. Nothing else
changes, so C<zstd -D> reads and writes such frames with the copy. The
DictionarySet's C<add(id =E<gt> $id)> uses it. Croaks for an ID of 0 and for
bytes that are not a dictionary.

=item train_dictionary(\@samples, size => 16384)

=item train_dictionary(\@samples, size => 16384, method => 'fastcover', k => 0, d => 0, steps => 4, level => 3, id => 0)

Trains a standard zstd dictionary of at most C<size> bytes (16 KiB by
default) on the sample values, and returns its bytes (write them to a file
to load them with L</load_dictionary($path)> or use them with C<zstd -D>). Train it
on values of the kind it will compress (the same key prefix, say), a few
hundred of them or more, uncompressed. It croaks when zstd cannot train a
dictionary from the samples (fewer than 5 of them, or too little data), and
on an option out of range. The options:

=over 4

=item method

How the dictionary's content (what frames copy from) is chosen:
C<fastcover> (the default, as C<zstd --train>), C<cover> (as
C<zstd --train-cover>: slower, sometimes better), or C<samples>: the
samples themselves, back to back, the last ones kept when they do not all
fit. With few samples (tens to a few hundred, all fitting in the size) the
last one is usually best: on the benchmark corpus's JSON families it stored
between 10 and 31 % fewer bytes than fastcover's 16 KiB dictionary at
level 12 (F<bench/README.md>, "Measured apart"). Which is best for your values is
for measuring: L</frame_sizes(\@values, level =E<gt> 3, dictionary =E<gt> $bytes)> on values held out of the training, as
C<cmrx-dict> does.

=item k, d, steps

C<cover> and C<fastcover>: the segment size C<k> (0, the default:
searched from 50 to 2000 in C<steps> steps, 4 by default, each a training
of its own) and the length of the byte sequences counted, C<d> (6 or 8; 0,
the default: both tried). Not for C<samples>.

=item level

The zstd level the dictionary's entropy tables are made for, and at which
the search compares candidates (3 by default). Train for the level you
compress at.

=item id

The dictionary's ID, which every frame names: 0 (the default) draws one
from the content (32768 or above: 4 bytes in each frame, 2 for the few
below 65536); IDs below 256
take 1 byte in each frame, below 65536 two. Within one application, give
each dictionary its own; the zstd format reserves IDs below 32768 and from
2^31 for a public registry, so keep such IDs for your own values.

=back

=item train_dictionary_with_parameters(\@samples, %options)

L</train_dictionary(\@samples, size =E<gt> 16384)> with the same options, returning two things: the
dictionary's bytes and a hash reference of what was used: C<method>, C<k>
and C<d> (as the search found them: train again with them to skip the
search), C<steps>, C<level>, C<id> (as asked: 0 for one drawn from the
content) and C<size>.

=item frame_sizes(\@values, level => 3, dictionary => $bytes)

The size of the frame L</compress($data, level =E<gt> 3, dictionary =E<gt> $id)> would make of each value, as an
array reference, with the dictionary whose I<bytes> are given (a
dictionary L</train_dictionary(\@samples, size =E<gt> 16384)> returned, say: it is neither loaded nor
kept) or without one. This is how C<cmrx-dict> compares candidate
dictionaries and levels on values they were not trained on, without
loading each. It croaks on a level out of range and on bytes that are not
a zstd dictionary.

=item compress($data, level => 3, dictionary => $id)

One zstd frame of C<$data> (a string of bytes: a UTF-8 string is downgraded,
wide characters croak, as in Compress::Zlib), at C<level> (zstd's: 1 to 22,
the fast levels -1 to -7, or 0 for the default, 3), with the loaded
dictionary C<$id> (default: none). The frame states its content size. It
croaks on an unknown option, a level out of range and a dictionary that is
not loaded.

=item decompress($frame)

The data of one zstd frame, with the dictionary its header names; C<undef>
for anything else: not a zstd frame, a corrupt or truncated one, bytes after
it, data over
L<$Cache::Memcached::RustXS::MaxDecodedSize|Cache::Memcached::RustXS/$MaxDecodedSize>
(64 MiB by default: a decompression bomb or a lying size costs at most that much
memory), or a dictionary that is not loaded. A missing dictionary is also
reported by a warning (how often: L</DIAGNOSTICS>).

=item frame_dictionary_id($frame)

The ID of the dictionary the header of the zstd frame C<$frame> (or a
reference to it) names, read by the engine as C<decompress> reads it: 0
for a frame made without a dictionary (or with zstd's C<--no-dictID>),
C<undef> when C<$frame> does not start with a whole zstd frame header (no
magic number, a header cut short or with its reserved bit set, a skippable
frame). Only the header is read: the rest of the frame may be missing or
corrupt.

=item compress_methods(level => 3, dictionary => $path, max_output => 64 MiB)

=item compress_methods(dictionaries => $dir, prefix => $prefix, rescan_interval => 60, max_output => 64 MiB)

=item compress_methods(dictionaries => $dir, rescan_interval => 60, max_output => 64 MiB)

Returns C<[ $compress, $decompress ]> for Cache::Memcached::Fast's
C<compress_methods> option, as L<Cache::Memcached::RustXS::Zlib> does, but
the compressor writes zstd (with the dictionary in the file C<$path>, which
it loads, when given).

B<Fast never calls the compressor without C<compress_threshold>>: it
compresses values of at least C<compress_threshold> bytes, and its default
is -1, so a Fast object given these methods alone reads zstd but writes
every value raw, with no warning. Give it C<compress_threshold> too, or
both at once with L</fast_options(%options)>:

    use Cache::Memcached::Fast;
    use Cache::Memcached::RustXS::Zstd;
    my $fast = Cache::Memcached::Fast->new({
        servers            => ['127.0.0.1:11211'],
        compress_threshold => 64,
        compress_methods   => Cache::Memcached::RustXS::Zstd::compress_methods(
            dictionaries => '/etc/app/dictionaries'),
    });

With C<dictionaries>, the dictionary set in C<$dir> is loaded (by
L</load_dictionaries($dir, rescan_interval =E<gt> 60)>, with
C<rescan_interval> if given) and the compressor writes as the set says for
keys that start with C<$prefix>: with the current dictionary whose prefix is
the longest that C<$prefix> starts with, at its level, or, when there is
none, as L</A prefix that matches no entry> says. Sites that make one Fast
object per namespace give the object's C<namespace> as C<$prefix> (a key's
prefix in the set includes its namespace).

Without C<prefix> (or with C<prefix =E<gt> ''>), the compressor writes with
the set's B<whole-cache entry>, for the common single
Cache::Memcached::Fast object whose compressor is never given the key
(L<Cache::Memcached::RustXS::Zstd::DictionarySet/The whole-cache entry>).
A set without one (made by hand, or by an earlier
C<cmrx-dict>) makes C<compress_methods> without C<prefix> croak, saying
so: give C<prefix>, or run C<cmrx-dict train --all> on the set again, which
adds the entry. Readers need nothing new: every frame names its dictionary,
and the entry is loaded with the set.

The compressor follows the set while the process runs, without a restart
(L<Cache::Memcached::RustXS::Zstd::DictionarySet/What a process loads, and when>),
at the cost of one clock reading per value. It only ever writes with a
dictionary the process has loaded. A whole-cache entry that is only staged is written from its
time on, the fallback before. C<level> and C<dictionary> cannot go with
C<dictionaries>. The decompressor reads zstd (with any loaded
dictionary), gzip and zlib, told apart by their magic bytes: values written
before the switch to zstd, by other clients or by other languages, read as
before. The compressor declines already-compressed data (JPEG, PNG, gzip,
zstd, ...), large data that does not compress, and any value whose
compressed form is more than C<compress_ratio> of it (by default 1: one
that does not shrink at all), so Fast stores it raw; give it Fast's own
C<compress_ratio> (L</fast_options(%options)> does, 0.8 unless told
otherwise) so that the two agree on every value and L</counters()> count
what Fast stores. C<max_output> is the decompressor's cap, by default
L<$Cache::Memcached::RustXS::MaxDecodedSize|Cache::Memcached::RustXS/$MaxDecodedSize>; a larger value is a miss.

=item fast_options(%options)

The options that make a Cache::Memcached::Fast object compress with this
module's methods, as a list to put inside the hash its C<new> takes:
C<< (compress_threshold => 64, compress_methods => [...]) >> (208 without
a dictionary), with C<compress_ratio> too when it is given here.

    use Cache::Memcached::Fast;
    use Cache::Memcached::RustXS::Zstd;
    my $users = Cache::Memcached::Fast->new({
        servers   => ['127.0.0.1:11211'],
        namespace => 'user:',
        Cache::Memcached::RustXS::Zstd::fast_options(
            dictionaries => '/etc/app/dictionaries', prefix => 'user:'),
    });

Give Fast's two settings here rather than next to the list in the hash (a
key written after the list replaces its value, one before it is replaced).
Options: those of
L</compress_methods(level =E<gt> 3, dictionary =E<gt> $path, max_output =E<gt> 64 MiB)>
(C<level>, C<dictionary>, C<dictionaries>, C<prefix>, C<rescan_interval>,
C<max_output>), which makes the methods, and:

=over 4

=item compress_threshold => 64 with a dictionary, 208 without

The size in bytes from which Fast compresses a value; shorter values are
stored raw. A whole number from 1 to 2**31-1 (Fast keeps it in a C
C<int>); anything else croaks, 0 and negative numbers too, since Fast then
compresses nothing. The default is 64 with C<dictionary> or
C<dictionaries>, 208 without.

Why: memcached stores an item in the smallest slab chunk that holds it
(L<Cache::Memcached::RustXS::Dict::SlabModel> says what an item takes), so
compressing saves memory only when
it moves the item to a smaller chunk, while it costs time at every set and
get. On the values of F<bench/data/values> cut to N bytes, each with its
own key, under Fast's default C<compress_ratio> (F<bench/threshold.pl>, its
first N bytes and N from the middle; a 16 KiB dictionary per kind of
value, trained on other values of the kind, at level 3): with a dictionary,
38 to 50 % of the items move to a smaller chunk at 48 bytes, 62 to 72 % at
64 (13.9 to 15.3 % of the memory saved), 90 to 97 % at 96; without one, 3 to
22 % at 128, 52 to 64 % at 208, 96 to 98 % at 320. The default is the
smallest size at which more than half the items get smaller.

A set's prefix that has no dictionary of its own and falls back to gzip or
zstd alone gets 64 too: Fast then calls the compressor on values of 64
bytes and more, which gzip or zstd alone seldom moves to a smaller chunk
below about 200 bytes, so most of those are stored raw, a few microseconds
lost per set. Give such an object its fallback's threshold: gzip's
(L<Cache::Memcached::RustXS::Zlib/compress_threshold =E<gt> 224>), or
zstd's without a dictionary (above).

=item compress_ratio => 0.8

Fast's, checked and given to it, and to the compressor, as by
L<Cache::Memcached::RustXS::Zlib/fast_options(%options)>: a frame is
stored only if it is at most this fraction of the value's size, and the
compressor declines what Fast would store raw anyway.

=back

It croaks on an unknown option, and as C<compress_methods> does on theirs.

=item counters()

What this process wrote and read as cache values, and what it left alone,
since it started (a forked worker starts from its parent's counts; threads
share them):

    {
        dictionaries => {                       # by dictionary ID
            2716305118 => {
                written => { values => 1200, raw_bytes => 1814000, stored_bytes => 402100 },
                read    => { values => 9800, raw_bytes => 14820000, stored_bytes => 3283000 },
            },
            ...                                 # every loaded dictionary
        },
        zstd => { written => {...}, read => {...} },   # zstd without a dictionary
        gzip => { written => {...}, read => {...} },
        zlib => { written => {...}, read => {...} },
        misses   => { unknown_dictionary => 3, undecodable => 0, too_big => 0 },
        declined => { already_compressed => 40, incompressible => 12, too_small => 310 },
        sets     => { unreadable_rescans => 0 },
    }

=over 4

=item * C<written>

Values the writers of this distribution compressed and kept for
memcached, with their bytes before (C<raw_bytes>) and after
(C<stored_bytes>): the compressors of this module's and
L<Cache::Memcached::RustXS::Zlib>'s C<compress_methods> (Fast's writes),
and L<Cache::Memcached::RustXS::Memcached>'s writers. Not counted: calls of
L</compress($data, level =E<gt> 3, dictionary =E<gt> $id)> and C<memGzip>
made by other code (and so Cache::Memcached's own gzip, even overridden).

=item * C<read>

Values decoded, with their bytes as stored and decoded: by GetParser, the
decompressors of C<compress_methods>, L</decompress($frame)>, and
L<Cache::Memcached::RustXS::Zlib>'s C<memGunzip> and C<uncompress>.

=item * C<misses>

Compressed values read that came to nothing: C<unknown_dictionary>, a zstd
frame naming a dictionary this process has not loaded (after the rescan of
its sets had its chance); C<undecodable>, a frame that does not decode
(corrupt, truncated, not the format its magic number says); C<too_big>,
one that would decode past the reader's cap.

=item * C<declined>

Values left uncompressed: C<already_compressed> (the compressor saw JPEG,
PNG, gzip, zstd, ...), C<incompressible> (it did not shrink to the
compressor's C<compress_ratio>, or a sample of a large value did not
shrink), and C<too_small> (L<Cache::Memcached::RustXS::Memcached> stored it
under its C<compress_threshold>; Cache::Memcached::Fast never shows such
values to its compressor, so they are not counted for it).

=item * C<sets>

C<unreadable_rescans>: rescans of a loaded dictionary set that could not
read it (the process kept what it had loaded; see
L</load_dictionaries($dir, rescan_interval =E<gt> 60)>). Alert on it.

=back

The counts are whole numbers that only grow: an exporter sends the
difference since its last look. Counting costs a few atomic additions per
value (the benchmark's C<get_multi> of 100 compressed values is within
noise of a build without it). As statsd counters, from a timer or after a
request:

    use IO::Socket::INET;
    use Cache::Memcached::RustXS::Zstd qw(counters);

    my $statsd = IO::Socket::INET->new(PeerAddr => '127.0.0.1:8125', Proto => 'udp');
    my %last;
    sub flat {                                   # "dictionaries.ID.read.values" => N
        my ($tree, $path, $out) = @_;
        for my $key (keys %$tree) {
            my $name = length $path ? "$path.$key" : $key;
            ref $tree->{$key} ? flat($tree->{$key}, $name, $out) : ($out->{$name} = $tree->{$key});
        }
        return $out;
    }
    sub send_counters {
        my $now = flat(counters(), '', {});
        for my $name (sort keys %$now) {
            my $delta = $now->{$name} - ($last{$name} || 0);
            $statsd->send("cmrx.$name:$delta|c") if $delta;
        }
        %last = %$now;
    }
    send_counters();

As Prometheus text (for a C</metrics> page, or node_exporter's textfile
collector; each worker of a preforking server has its own counts, so
label them with the process):

    use Cache::Memcached::RustXS::Zstd qw(counters);

    sub prometheus_text {
        my $c = counters();
        my @out;
        my %kinds = ((map { ("dictionary=\"$_\"" => $c->{dictionaries}{$_}) } keys %{ $c->{dictionaries} }),
                     map { ("format=\"$_\"" => $c->{$_}) } qw(zstd gzip zlib));
        for my $way (qw(written read)) {
            for my $what (qw(values raw_bytes stored_bytes)) {
                my $metric = "cmrx_${way}_${what}_total";
                push @out, "# TYPE $metric counter";
                push @out, "$metric\{$_,pid=\"$$\"} $kinds{$_}{$way}{$what}" for sort keys %kinds;
            }
        }
        for my $group (qw(misses declined)) {
            push @out, "# TYPE cmrx_${group}_total counter";
            push @out, "cmrx_${group}_total\{reason=\"$_\",pid=\"$$\"} $c->{$group}{$_}"
                for sort keys %{ $c->{$group} };
        }
        return join "\n", @out, '';
    }
    print prometheus_text();

What to alert on:

=over 4

=item * C<misses.unknown_dictionary> growing

Values are written with a dictionary some readers lack: a set that did not
reach a host before its staged time, a host whose folder is stale, or
another team's set writing to the same cache. Each is a backend fetch.
Alert on any sustained rate; the warning in the log names the ID, and
C<cmrx-dict list> says which set has it.

=item * C<misses.undecodable> growing

Corruption, or another client writing flag 2 with a format nobody reads.
Should stay at 0.

=item * The written ratio of a dictionary (C<stored_bytes / raw_bytes>) rising

The values have drifted from what the dictionary was trained on: run
C<cmrx-dict report --dictionaries> and retrain.

=item * C<declined.incompressible> large against C<written>

Values that do not compress (already encrypted or binary) cost a compress
attempt each: raise their C<compress_threshold>, or write them with an
object without compression.

=item * No C<written> for a staged dictionary after its time

The writers did not follow the set: a host where the folder is not
updated, or writers made without C<dictionaries>.

=back

=back

=head2 A prefix that matches no entry

A C<prefix> that no current dictionary's prefix starts is not left to the
fallback in silence:

=over 4

=item *

When the prefix with the set's delimiter added is an entry of the set, it
is taken so, silently: C<prefix =E<gt> 'perf'> writes with the dictionary
of C<perf:>. The delimiter is the one C<cmrx-dict train --all> recorded in
the manifest (C<--delimiter>, C<:> by default); for a set without one, the
last character of each prefix that ends in neither a letter nor a digit.

=item *

Otherwise C<compress_methods> warns, once per set and prefix in the
process, naming the set's prefixes and what the values get, and writes
with the whole-cache entry when the set says it stores keys without an
entry of their own in less memory than the fallback (or when the prefix
begins several entries' prefixes, C<app1:> of C<app1:user:> and
C<app1:post:>, whose keys the object writes), else with the fallback:

    compress_methods: prefix 'perf' matches no dictionary of the set in /etc/app/dictionaries (its prefixes: 'compat:', 'gh:', 'npm:', and '' for the whole cache): its values get the whole-cache dictionary (ID 4, level 19) at app.pl line 12.

=back

L<Cache::Memcached::RustXS::Memcached> does the same with its
C<namespace>.

Cache::Memcached writes through L<Cache::Memcached::RustXS::Memcached>, a
subclass whose objects write zstd (without changing what
C<Compress::Zlib::memGzip> does anywhere else in the process) and read with
L<Cache::Memcached::RustXS::GetParser>. That parser decodes zstd values
wherever it is used.

=head1 DIAGNOSTICS

Two warnings say that values are misses for a reason that may last. Each
is said the first time, and again at most once per
C<$Cache::Memcached::RustXS::Zstd::WarnInterval> seconds (60 by default)
while it lasts: never once per value, so a cache full of such values does
not flood the log, and not only once per process, which would hide a
problem that lasts. Each text counts apart, and the count is the
process's (its threads share it):

=over 4

=item Cache::Memcached::RustXS: zstd dictionary %d is not loaded, so values compressed with it are misses (load it with Cache::Memcached::RustXS::Zstd::load_dictionary)

A reader (L</decompress($frame)>, L<Cache::Memcached::RustXS::GetParser>,
the decompressors of either module's C<compress_methods>) met a frame
naming a dictionary this process has not loaded, and a rescan of the
loaded sets did not find it: once per interval for each dictionary ID.
L<Cache::Memcached::RustXS::Operations/COUNTERS> says what to look at on
a fleet.

=item Cache::Memcached::RustXS::Zstd: rescanning the dictionary set in %s: %s; the dictionaries loaded before stay

A set loaded by L</load_dictionaries($dir, rescan_interval =E<gt> 60)>
could not be read again: once per interval for each folder and reason.

=back

C<local> C<$Cache::Memcached::RustXS::Zstd::WarnInterval> to 0 to see
every one. The interval is the engine's, one for the whole process.

=head1 PREFORKING SERVERS

L</load_dictionaries($dir, rescan_interval =E<gt> 60)> prepares every
dictionary of a set as it loads, so a server that loads its sets before it
forks its workers shares them with every worker, copy-on-write; what each
worker still pays, and what rescans after the fork cost, is in
L<Cache::Memcached::RustXS::Operations/PREFORKING SERVERS>.

=head1 ROLLING OUT AND BACK

A value written as zstd can only be read by a reader that knows zstd and has
its dictionary. A reader with this distribution but without the dictionary
gets a miss and a warning (L</DIAGNOSTICS>). A reader without this
distribution gets a miss for it, never garbage and never a die, when it is
made to read compressed values at all, as its version needs (the releases
tested: L<Cache::Memcached::RustXS/"Perls, clients and platforms">):

=over 4

=item * Cache::Memcached, any configuration: C<get> returns
C<undef>, C<get_multi> has the key with an C<undef> value.

=item * Cache::Memcached::Fast 0.28, any configuration: the key is a miss.

=item * Cache::Memcached::Fast before 0.28, made with C<compress_threshold>
(0 or more) or C<compress_methods>: the key is a miss. Made with neither, it
has no decompressor at all, and the first compressed value it reads, gzip
as much as zstd, dies with "Not a CODE reference" and leaves its connection
out of step (later values on it come back as misses or as another key's
value). Such a reader cannot read the gzip values of today either: set
C<compress_threshold> on it (0 if it must not compress its own writes)
before anything is rolled out.

=back

So readers go first:

=over 4

=item 1. Train

C<cmrx-dict report --server HOST:PORT> shows, per key prefix, what gzip and
zstd would store; C<cmrx-dict train --server HOST:PORT --prefix P --out
P.dict> trains a dictionary on the values of a prefix. Ship the dictionary
file with the application. A new dictionary gets a new ID, so dictionaries
can be added later without touching stored values.

=item 2. Readers

Deploy everywhere: this distribution, C<load_dictionaries> of the set (or
C<load_dictionary> of every dictionary) at startup, and as readers GetParser for Cache::Memcached
(C<parser_class>) and C<compress_methods> of either Zlib or this module for
Cache::Memcached::Fast (their decompressors read zstd; with these, a Fast
before 0.28 needs no C<compress_threshold> to read). Writers still write gzip:
nothing changes yet. A stock reader left out (another team's service, a
script) sees zstd values as misses only when it is made as the list above
says.

=item 3. Writers

Switch the writers: Cache::Memcached::RustXS::Memcached with C<zstd>, or
this module's C<compress_methods> with the dictionary, and a
C<compress_threshold> (both from L</fast_options(%options)>: without a
threshold Fast writes every value raw). Values are rewritten as zstd as
they are set again.

=item Rolling back

Switch writers back to gzip first, and keep the readers (and their
dictionaries) until the zstd values have expired or been rewritten; a
reader that goes back to a stock client before then sees those values as
misses (the application computes them again), provided it is made as the
list above says (a stock Fast before 0.28 with C<compress_threshold> or
C<compress_methods>). Dictionaries are never
removed while values that name them may exist.

=back

=head1 PERFORMANCE

Items resident in a memcached of 64 MB (C<-m 64>, filled past its memory
through Cache::Memcached::Fast, counted by the server: C<curr_items>), the
JSON families of the benchmark corpus, the set made by C<cmrx-dict train
--all> of half of the values and every writer filled with the other half
(F<bench/memory.pl>). Each family alone, in the run whose set numbered its
dictionaries from 1 (1 byte in each frame; F<bench/README.md>, "Items in
memcached's memory"):

                              Fast's default  our gzip  zstd, no    the tuned
                              gzip                      dictionary  set
    GitHub API responses          81,526       1.00x      0.99x       2.46x
    package.json documents        91,978       1.00x      0.96x       2.27x
    browser-support records      123,411       1.00x      0.98x       2.08x
    compress, us per value          35.1        18.5       10.2        25.1
    decompress, us per value        11.6         4.2        3.6         1.3

All three families together, in another run, with the random 4-byte IDs
C<cmrx-dict train --all> gives now ("What random dictionary IDs cost"
there): Fast's default gzip held 95,861 items, the set written by a Fast
object per prefix 2.24 times as many (158 stored bytes per value, gzip
501), and a single Fast object for the whole application, with no
namespace, which writes with the set's whole-cache entry
(C<compress_methods(dictionaries =E<gt> $dir)> without C<prefix>), 2.11
times (173 bytes).

What decides the count is memcached's item, not the bytes alone: each
value costs its key and memcached's own bytes per item besides, in a slab
chunk up to a quarter larger; L<Cache::Memcached::RustXS::Dict::SlabModel>
says how many and models it, and C<cmrx-dict> ranks its choices by it.

Values that are Perl data are frozen by both clients with Storable before
they are compressed; a set trained on the frozen bytes (C<cmrx-dict train
--all> on a server the application fills, or on a file of the stored
values) serves them the same way. The same JSON decoded into hashes, in
64 MB (the Perl-data part of F<bench/memory.pl>, in a third run, whose set
numbered its dictionaries from 1; F<bench/README.md>, "Perl data"), per
value:

                                        items      stored bytes /
                                        vs gzip    gzip of the JSON
    gzip (either client)                 1.00x        1.19
    the set, a Fast object per prefix,
      or one ::Memcached object          2.16x        0.42
    the set, one Fast object             2.02x        0.46
    Sereal with its own zstd             1.06x        1.10

What the items buy (F<bench/hitrate.pl>: a read-through cache, get_multi of
100 keys, each miss fetched and set, under Zipf-distributed requests over
a key space several times what the memcached holds: 300,000 keys, a 32 MB
memcached, 600,000 gets counted after as many of warm-up):

                          Zipf(0.99)            Zipf(0.8)
                          hit rate  fetches     hit rate  fetches
    Fast's default gzip    79.8 %    1.00x      58.7 %    1.00x
    the set, a Fast
      object per prefix    87.5 %    0.62x      74.3 %    0.62x
    the set, one Fast
      object               87.2 %    0.63x      72.0 %    0.68x

(201.8 backend fetches per 1,000 gets with gzip under Zipf(0.99), 125.3
and 127.9 with the set; under Zipf(0.8) 413.2, 257.4 and 280.4). Every
value read back was the value set. The fetches follow the items: the set
held 98,954 (one object) and 109,219 (per prefix) against gzip's 49,000
under Zipf(0.99).

On realistic small values (the benchmark corpus in F<bench/data/values>:
583 real JSON documents and HTML fragments, 100 B to 10 KB), per value, with
a 16 KiB dictionary per kind of value trained with L</train_dictionary(\@samples, size =E<gt> 16384)> on
half of its values and measured on the other half, against gzip in the same
run (F<bench/README.md> has the full table):

                               stored bytes   compress      decompress
                               / our gzip's   vs our gzip   vs our gunzip
    JSON records, API
    responses, templated HTML  0.36 - 0.43    3.9 - 5.3 x   2.4 - 3.6 x
    prose HTML (docs)          0.67 - 0.71    2.3 - 2.7 x   1.8 x
    all, zstd with dictionary  0.54           2.5 x         1.95 x
    all, zstd without          1.04           1.8 x         1.27 x

Compressing with a dictionary is 4.8 to 11.9 times as fast as
Compress::Zlib's C<memGzip>. How much a dictionary saves depends on how
alike the values are: values of one schema shrink most, prose least. The
frames carry no checksum: 4 bytes a value and 5 to 18 % more decompression
time, against catching the corruption of stored literals that a frame's
structure does not reveal (frames that do carry one, as the C<zstd> command
writes them, are checked).

=head1 SEE ALSO

L<Cache::Memcached::RustXS::Memcached>, L<Cache::Memcached::RustXS::GetParser>,
L<Cache::Memcached::RustXS::Zlib>, L<cmrx-dict>, L<Cache::Memcached::Fast>,
the zstd manual (C<zstd --train>, C<zstd -D>).

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
