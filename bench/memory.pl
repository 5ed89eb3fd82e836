#!/usr/bin/perl
# Items resident in a 64 MB memcached, per way of writing, in memcached's
# own terms (its curr_items once filled past its memory), and the time per
# value of each way, in the same run; then the same for the values stored as
# Perl hashes (Storable, and Sereal where it is installed).
#
#   perl -Mblib bench/memory.pl [--quick] [--memory MB] [--no-storable]
#
# Knobs: BENCH_ROUNDS, BENCH_SECONDS, BENCH_QUICK, BENCH_MEMORY_FAMILIES.
# See bench/README.md ("Memory").
use strict;
use warnings;
use utf8;
use FindBin ();
use lib "$FindBin::Bin/lib", "$FindBin::Bin/../dev/lib";    # dev/lib: helpers shared with the tests
use File::Path ();
use File::Temp ();
use Getopt::Long ();
use POSIX ();
use Storable ();

use CMRXBench::Runner qw(now median);
use CMRXBench::Memory qw(corpus_halves train_set live_node run_cmrx_dict small_id_copy gzip_methods set_methods
                         one_object_methods stats commas table);

binmode STDOUT, ':encoding(UTF-8)';
STDERR->autoflush(1);
$SIG{INT} = $SIG{TERM} = sub { print STDERR "\ninterrupted\n"; exit 130 };

my %opt = (quick => $ENV{BENCH_QUICK} ? 1 : 0, memory => 64, storable => 1);
Getopt::Long::GetOptions(\%opt, 'quick!', 'memory=i', 'storable!', 'help|h')
    && !$opt{help} && $opt{memory} >= 8
    or die "usage: perl -Mblib bench/memory.pl [--quick] [--memory MB (8 or more)] [--no-storable]\n";
my $QUICK    = $opt{quick};
my $ROUNDS   = $ENV{BENCH_ROUNDS}  || ($QUICK ? 3 : 15);
my $SECONDS  = $ENV{BENCH_SECONDS} || ($QUICK ? 0.03 : 0.2);
my @FAMILIES = split /,/, ($ENV{BENCH_MEMORY_FAMILIES} || 'gh,npm,compat');   # the JSON families
my $MEMORY_MB = $opt{memory};       # memcached -m
my $THRESHOLD = 100;                # compress_threshold of every writer
my $BATCH     = 500;                # keys per set_multi
my $FILL_FACTOR = 1.5;              # items written per item the model says fit
my $MAX_FILLS = 3;                  # more writes when the server is not full yet
my $MAX_SETTINGS_FILL = 8;          # a fill with other settings: at most this many times the first's writes
my $CHECKED   = 200;                # values read back from each fill
my $BAR_ITEMS = 2.85;               # the set's items over Fast's default gzip's, all families
my $BAR_DECOMPRESS = 1.5;           # the set's decompression speed over our memGunzip's

for my $m (qw(Cache::Memcached::Fast Cache::Memcached::RustXS::Zlib Cache::Memcached::RustXS::Zstd
              Cache::Memcached::RustXS::Zstd::DictionarySet Cache::Memcached::RustXS::Dict::SlabModel)) {
    eval "require $m; 1" or die "bench/memory.pl needs $m (perl Makefile.PL && make, then perl -Mblib): "
                              . (split /\n/, $@)[0] . "\n";
}

# ---- the corpus: half trains the set, the other half fills ---------------------

my ($train, $fill) = corpus_halves(@FAMILIES);
my $out = "$FindBin::Bin/results";
File::Path::make_path($out);
my $tmp = File::Temp->newdir;
my $memory = Cache::Memcached::RustXS::Dict::SlabModel->new(memory_limit => $MEMORY_MB << 20);

# The Storable section runs in a child process (this script again), which
# loads its own set only: a process loads one dictionary per ID, and the
# 1-byte copies of both sets number theirs from 1.
exit storable_child() if $ENV{CMRX_BENCH_STORABLE_CHILD};

# cmrx-dict train --all, no option but where to read and write and --stage
# 0 (current at once: the fills write with it right after).
print STDERR "training the set: cmrx-dict train --all --stage 0 --out-dir DIR (half of the values)\n";
my $set_dir = train_set(dir => "$tmp/set", log => "$out/memory-train.txt",
                        items => [ map { @{ $train->{$_} } } @FAMILIES ]);
# The same set with 1-byte IDs (1, 2, ...) instead of its random ones (4
# bytes in each frame): what those IDs cost in items.
my $small_dir = small_id_copy($set_dir, "$tmp/set-1-byte-ids");

my $storable = $opt{storable} ? storable_section() : undef;

my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->read($set_dir);
my %set_entry = map { my $e = $set->current("$_:"); $e ? ($_ => $e) : () } @FAMILIES;

# ---- the ways of writing -------------------------------------------------------------
#
# A way: name; methods => sub { $family => compress_methods pair, or undef
# to store raw }; one => 1 for a single client writing every family; and
# serialize => [freeze, thaw] for references (default Storable's nfreeze,
# as both clients), or unavailable => why not.

sub fast_way {
    my ($name, $methods_of, %o) = @_;
    my %pair;
    return { name => $name, %o, methods => sub { $pair{ $_[0] } ||= $methods_of->($_[0]) } };
}

my ($one, $one_why) = one_object_methods($set_dir);
my ($one_small, $one_small_why) = one_object_methods($small_dir);
my @WAYS = (
    fast_way('Fast default (gzip)', sub { gzip_methods() }),
    fast_way('our gzip', sub { Cache::Memcached::RustXS::Zlib::compress_methods() }),
    fast_way('zstd, no dictionary', sub { Cache::Memcached::RustXS::Zstd::compress_methods(level => 3) }),
    fast_way('the set, a Fast object per prefix', sub { set_methods($set_dir, "$_[0]:") }),
    $one ? fast_way('the set, one Fast object', sub { $one }, one => 1)
         : { name => 'the set, one Fast object', unavailable => $one_why },
    fast_way('the set with 1-byte IDs, a Fast object per prefix', sub { set_methods($small_dir, "$_[0]:") }),
    $one_small ? fast_way('the set with 1-byte IDs, one Fast object', sub { $one_small }, one => 1)
               : { name => 'the set with 1-byte IDs, one Fast object', unavailable => $one_small_why },
);
my @NAMES = map { $_->{name} } @WAYS;
my ($BASE, $SET, $ONE, $SET_SMALL, $ONE_SMALL) = @NAMES[0, 3, 4, 5, 6];

# The writers of a way on $addr: family => client (one object for all of
# them with one => 1, or without compression).
sub clients {
    my ($way, $addr, $fams) = @_;
    my %o = (servers => [ $addr ], compress_threshold => $way->{methods} ? $THRESHOLD : -1,
             $way->{serialize} ? (serialize_methods => $way->{serialize}) : ());
    return $way->{clients}->($addr, $fams, $way) if $way->{clients};
    my $m = $way->{methods};
    my $new = sub { Cache::Memcached::Fast->new({ %o, $m ? (compress_methods => $m->($_[0])) : () }) };
    my $shared = $way->{one} || !$m ? $new->('') : undef;
    return { map { ($_ => $shared || $new->($_)) } @$fams };
}

# ---- filling a memcached past its memory ------------------------------------------------

# The fill order: the families' values in turn, each written again and
# again under new keys (the value's key, a colon, a counter).
sub fill_order {
    my ($values, @fams) = @_;
    my @seq;
    my $longest = 0;
    for (@fams) { $longest = @{ $values->{$_} } if @{ $values->{$_} } > $longest }
    for my $i (0 .. $longest - 1) {
        for my $f (@fams) { push @seq, [ $f, @{ $values->{$f}[ $i % @{ $values->{$f} } ] } ] }
    }
    return \@seq;
}

# The stored length and flags of a value of family $f written this way.
sub stored_form {
    my ($way, $f, $value) = @_;
    my ($bytes, $flags) = ($value, 0);
    ($bytes, $flags) = (($way->{serialize} ? $way->{serialize}[0] : \&Storable::nfreeze)->($value), 1) if ref $value;
    my $m = $way->{methods} && $way->{methods}->($f);
    my $c;
    return [ length $c, $flags | 2 ]
        if $m && length $bytes >= $THRESHOLD && $m->[0]->(\$bytes, \$c) && length $c <= 0.8 * length $bytes;
    return [ length $bytes, $flags ];
}

sub stored_forms {
    my ($way, $seq) = @_;
    my %cache;
    return [ map { $cache{"$_->[0]\0$_->[1]"} ||= stored_form($way, $_->[0], $_->[2]) } @$seq ];
}

sub same {
    my ($got, $want) = @_;
    return $got eq $want unless ref $want;
    local $Storable::canonical = 1;
    return ref $got && Storable::nfreeze($got) eq Storable::nfreeze($want);
}

# Items resident after filling a fresh server past its memory, as memcached
# counts them, with the model's figure beside.
sub fill {
    my ($way, $values, $fams, @server_args) = @_;
    return { unavailable => $way->{unavailable} } if $way->{unavailable};
    my $seq = fill_order($values, @$fams);
    my $forms = stored_forms($way, $seq);
    my $model = @server_args ? $memory->with_settings(settings_of(@server_args)) : $memory;
    my ($forecast, $rounds) = $model->forecast_items([ map { [ length($seq->[$_][1]) + 8, @{ $forms->[$_] } ] } 0 .. $#$seq ]);
    # What fits, roughly: the memory over the mean chunk of one round.
    my $chunks = 0;
    $chunks += $model->item_memory(length($seq->[$_][1]) + 8, @{ $forms->[$_] }) for 0 .. $#$seq;
    my $count = int($FILL_FACTOR * ($MEMORY_MB << 20) / ($chunks / @$seq));
    # Servers started with other settings are filled on until every class
    # is full (the forecast's rounds), up to $MAX_SETTINGS_FILL times that.
    if (@server_args) {
        my $until_full = $rounds * @$seq;
        $count = $until_full < $MAX_SETTINGS_FILL * $count ? $until_full : $MAX_SETTINGS_FILL * $count
            if $until_full > $count;
    }
    require CMRXDev::Memcached;
    my $server = CMRXDev::Memcached->start(args => [ '-m', $MEMORY_MB, @server_args ]);
    my $client = clients($way, $server->address, $fams);
    my ($n, @written, $st) = (0);
    for my $pass (1 .. $MAX_FILLS) {
        my %by;
        for my $i (1 .. $count) {
            my ($f, $key, $value) = @{ $seq->[ $n % @$seq ] };
            my $k = sprintf '%s:%07d', $key, $n;
            push @written, [ length $k, @{ $forms->[ $n++ % @$seq ] } ];
            push @{ $by{$f} }, [ $k, $value ];
            if (@{ $by{$f} } == $BATCH || $i == $count) {
                $client->{$_}->set_multi(@{ $by{$_} }) for grep { @{ $by{$_} } } keys %by;
                %by = ();
            }
        }
        $st = stats($server->address);
        last if $st->{evictions} > 0;
    }
    # The last values written read back whole (or are gone: a slab class
    # short of memory evicts its own recent items).
    my ($wrong, $missing) = (0, 0);
    for my $j ($n - $CHECKED .. $n - 1) {
        my ($f, $key, $value) = @{ $seq->[ $j % @$seq ] };
        my $got = $client->{$f}->get(sprintf '%s:%07d', $key, $j);
        if (!defined $got) { $missing++ }
        elsif (!same($got, $value)) { $wrong++ }
    }
    $server->stop;
    my %seen;
    my @once = grep { !$seen{"$_->[0]\0$_->[1]"}++ } @$seq;
    my $bytes = 0;
    $bytes += stored_form($way, $_->[0], $_->[2])->[0] for @once;
    return { items => 0 + $st->{curr_items}, evictions => 0 + $st->{evictions}, written => $n,
             model => $model->resident_items(\@written), forecast => $forecast, rounds_until_full => $rounds, written_per_round => scalar @$seq, wrong => $wrong, missing => $missing,
             stored_bytes => 0 + $st->{bytes}, bytes_per_value => $bytes / @once };
}

# Dict::SlabModel's settings of memcached's options -f, -n and -C.
sub settings_of {
    my @args = @_;
    my %s;
    while (@args) {
        my $o = shift @args;
        if    ($o eq '-C') { $s{cas} = 0 }
        elsif ($o eq '-f') { $s{growth_factor} = shift @args }
        elsif ($o eq '-n') { $s{chunk_size} = shift @args }
        elsif ($o eq '-o' && $args[0] =~ /\Aslab_chunk_max=([0-9]+)\z/) { shift @args; $s{slab_chunk_max} = $1 }
        else  { die "settings_of: '$o' is not modelled\n" }
    }
    return %s;
}

# "123,456 (2.30x)" against $base, or why the way did not run.
sub items_cell {
    my ($r, $base) = @_;
    return 'not available' if $r->{unavailable};
    return commas($r->{items}) . ($base ? sprintf(' (%.2fx)', $r->{items} / $base->{items}) : '');
}

my @ROWS = ((map { [ $_, [$_] ] } $QUICK ? () : @FAMILIES), [ 'all three, a prefix each', [@FAMILIES] ]);
my %items;
for my $row (@ROWS) {
    my ($name, $fams) = @$row;
    for my $way (@WAYS) {
        print STDERR "filling a ${MEMORY_MB} MB memcached: $name, $way->{name}\n" unless $way->{unavailable};
        $items{$name}{ $way->{name} } = fill($way, $fill, $fams);
    }
}

# ---- memcached's settings: defaults, the advisor's, others --------------------------------
#
# Fast's gzip and the set (a Fast object per prefix), all three families,
# in servers started with other settings: the ones cmrx-dict report's
# advisor names for the set's values on a default node, and -f 1.08 with
# and without CAS.

require Cache::Memcached::RustXS::Dict::SettingsAdvisor;
my ($set_way) = grep { $_->{name} eq $SET } @WAYS;
my $all_seq = fill_order($fill, @FAMILIES);
my $set_forms = stored_forms($set_way, $all_seq);
my $advice = Cache::Memcached::RustXS::Dict::SettingsAdvisor::advise(
    items => [ map { [ length($all_seq->[$_][1]) + 8, @{ $set_forms->[$_] } ] } 0 .. $#$all_seq ],
    nodes => [ { spec => 'a default node', version => 'this one', stats => { cas_misses => 0, cas_hits => 0, cas_badval => 0 },
                 settings => { growth_factor => '1.25', chunk_size => 48, slab_chunk_max => 524288,
                               item_size_max => 1048576, maxbytes => $MEMORY_MB << 20, cas_enabled => 'yes',
                               slab_reassign => 'yes' } } ]);
my $advised = $advice->{nodes}[0]{best};
my $a_s = $advised->{settings};
my @advised_args = (($a_s->{growth_factor} != 1.25 ? ('-f', $a_s->{growth_factor}) : ()),
                    ($a_s->{chunk_size} != 48 ? ('-n', $a_s->{chunk_size}) : ()),
                    ($a_s->{slab_chunk_max} != 524288 ? ('-o', "slab_chunk_max=$a_s->{slab_chunk_max}") : ()),
                    ($a_s->{cas} ? () : '-C'));
my @SETTINGS = ([ "memcached's defaults", [] ], [ '-f 1.08', [ '-f', '1.08' ] ], [ '-f 1.08 -C', [ '-f', '1.08', '-C' ] ]);
push @SETTINGS, [ "@advised_args (advised)", \@advised_args ] unless grep { "@{ $_->[1] }" eq "@advised_args" } @SETTINGS;
$_->[0] .= ' (advised)' for grep { "@{ $_->[1] }" eq "@advised_args" && $_->[0] !~ /advised/ } @SETTINGS;
my %by_setting;
for my $setting (@SETTINGS) {
    my ($name, $args) = @$setting;
    for my $way (grep { $_->{name} eq $BASE || $_->{name} eq $SET } @WAYS) {
        print STDERR "filling a ${MEMORY_MB} MB memcached started with $name: $way->{name}\n";
        $by_setting{$name}{ $way->{name} } = $name eq "memcached's defaults"
            ? $items{ $ROWS[-1][0] }{ $way->{name} } : fill($way, $fill, \@FAMILIES, @$args);
    }
}

# ---- the advice followed: sets trained on live nodes -------------------------------------
#
# As an operator would: a node on memcached's defaults holding the training
# half, each value under $LIVE_COPIES keys (as a cache holds a value under
# many keys), written raw; train --all on it (its set then fills a
# memcached on memcached's defaults, beside the set from a file); report
# on it, and a node started with the options it advises, refilled the
# same way and trained on (its set then fills a memcached started with
# those options). Needs JSON::PP (report --json).

my $LIVE_COPIES = 1000;
my %followed;
if (eval { require JSON::PP; 1 }) {
    my @train_items = map { @{ $train->{$_} } } @FAMILIES;
    my $node = live_node(items => \@train_items, copies => $LIVE_COPIES);
    print STDERR "the advice followed: cmrx-dict train --all --server, a node on memcached's defaults "
               . "(each value under $LIVE_COPIES keys)\n";
    my $live_dir = "$tmp/set-live";
    run_cmrx_dict([ 'train', '--all', '--stage', '0', '--server', $node->address, '--out-dir', $live_dir ],
                  "$out/memory-train-live.txt");
    print STDERR "... cmrx-dict report --json on it\n";
    my $json = run_cmrx_dict([ 'report', '--server', $node->address, '--json' ], "$out/memory-report-live.json");
    $node->stop;
    my $advice = JSON::PP->new->decode(substr $json, index($json, '{'))->{memcached_settings}{nodes}[0];
    my @args = $advice->{change} ? split(' ', $advice->{best}{options}) : ();
    print STDERR "... a node started with @args, refilled, and cmrx-dict train --all --server on it\n";
    my $advised = live_node(items => \@train_items, copies => $LIVE_COPIES, args => \@args);
    my $advised_dir = "$tmp/set-advised";
    run_cmrx_dict([ 'train', '--all', '--stage', '0', '--server', $advised->address, '--out-dir', $advised_dir ],
                  "$out/memory-train-advised.txt");
    $advised->stop;
    %followed = (options => "@args", advice => $advice->{best}, copies => $LIVE_COPIES);
    print STDERR "filling a ${MEMORY_MB} MB memcached: the set trained on the live node\n";
    $followed{live} = fill(fast_way('live', sub { set_methods($live_dir, "$_[0]:") }), $fill, \@FAMILIES);
    print STDERR "filling a ${MEMORY_MB} MB memcached started with @args: the set trained on the node restarted so\n";
    $followed{advised} = fill(fast_way('advised', sub { set_methods($advised_dir, "$_[0]:") }), $fill, \@FAMILIES, @args);
    my ($file_advised) = grep { "@{ $_->[1] }" eq "@args" } @SETTINGS;
    $followed{file_advised} = $file_advised ? $by_setting{ $file_advised->[0] }{$SET}
                            : fill($set_way, $fill, \@FAMILIES, @args);
}

# ---- time per value, compress and decompress, interleaved rounds ----------------------

my @TIMED = grep { !$_->{unavailable} } @WAYS;
my @values = map { my $f = $_; map { [ $f, $_->[1] ] } @{ $fill->{$f} } } @FAMILIES;
my %timing;
for my $dir (qw(compress decompress)) {
    my %op;
    for my $way (@TIMED) {
        my @m = map { $way->{methods}->($_->[0]) } @values;
        my @st = map {
            my $o;
            $m[$_][0]->(\$values[$_][1], \$o) or die "$way->{name}: compress failed\n";
            $o;
        } 0 .. $#values;
        $op{ $way->{name} } = $dir eq 'compress'
            ? sub { my $o; $m[$_]->[0]->(\$values[$_][1], \$o) for 0 .. $#values }
            : sub { my $o; $m[$_]->[1]->(\$st[$_], \$o) for 0 .. $#values };
    }
    my @names = map { $_->{name} } @TIMED;
    my %calls = map {
        my $t0 = now; $op{$_}->(); my $once = now - $t0;
        ($_ => ($once > 0 ? int($SECONDS / $once) + 1 : 1));
    } @names;
    my %samples;
    for my $round (0 .. $ROUNDS - 1) {
        for my $j (0 .. $#names) {
            my $name = $names[ ($j + $round) % @names ];
            my $t0 = now;
            $op{$name}->() for 1 .. $calls{$name};
            push @{ $samples{$name} }, (now - $t0) / $calls{$name} / @values;
        }
    }
    $timing{$dir}{$_} = median(@{ $samples{$_} }) for @names;
}

# ---- the tables ---------------------------------------------------------------------------

printf "Items resident in a %d MB memcached (-m %d, filled past its memory through Cache::Memcached::Fast, "
     . "its own curr_items), %s values of bench/data/values: the set trained by `cmrx-dict train --all` "
     . "(--stage 0, no other option) on half of them, with its random IDs (4 bytes in each frame) and "
     . "rewritten to 1-byte ones; every writer filled with the other half\n\n",
    $MEMORY_MB, $MEMORY_MB, join('/', @FAMILIES);
table([ 'values', @NAMES ],
      (map { my $r = $items{ $_->[0] }; [ $_->[0], map { items_cell($r->{$_}, $_ eq $BASE ? undef : $r->{$BASE}) } @NAMES ] } @ROWS),
      [ 'bytes per value, all three', map { my $x = $items{ $ROWS[-1][0] }{$_}; $x->{unavailable} ? '-' : sprintf('%.0f', $x->{bytes_per_value}) } @NAMES ]);
print "  ($_->{name}: not available: $_->{unavailable})\n" for grep { $_->{unavailable} } @WAYS;
my $all = $items{ $ROWS[-1][0] };
my $items_ratio = $all->{$SET}{items} / $all->{$BASE}{items};
my $c_ratio = $timing{compress}{$BASE} / $timing{compress}{$SET};
my $d_ratio = $timing{decompress}{'our gzip'} / $timing{decompress}{$SET};
print "\nItems in the same memcached started with other settings (all three; ratios against Fast's gzip on "
    . "memcached's defaults; the advised settings are what cmrx-dict report names for the set's values; "
    . "the forecast is Dict::SlabModel's of a fill that runs on until every class is full)\n\n";
my $gzip_base = $by_setting{"memcached's defaults"}{$BASE};
table([ 'memcached started with', $BASE, $SET, 'forecast, gzip / the set', 'items written, gzip / the set' ],
      map { my $r = $by_setting{ $_->[0] };
            [ $_->[0], items_cell($r->{$BASE}, $_->[0] eq "memcached's defaults" ? undef : $gzip_base),
              items_cell($r->{$SET}, $gzip_base), join(' / ', map { commas($r->{$_}{forecast}) } $BASE, $SET),
              join(' / ', map { commas($r->{$_}{written}) } $BASE, $SET) ] } @SETTINGS);
print "  forecast against curr_items: ",
      join(', ', map { my $name = $_->[0]; map { my $x = $by_setting{$name}{$_};
          sprintf('%s, %s: %+.2f %%%s', $name, $_ eq $BASE ? 'gzip' : 'the set', 100 * ($x->{forecast} / $x->{items} - 1),
                  $x->{written} >= $x->{rounds_until_full} * $x->{written_per_round} ? '' : ' (not filled until every class was full)') }
          $BASE, $SET } @SETTINGS), "\n";

if (%followed) {
    my $gzip = $by_setting{"memcached's defaults"}{$BASE};
    printf "\nThe advice followed (all three; the training half on a live node, each value under %d keys; "
         . "ratios against Fast's gzip on memcached's defaults; report on the node advised %s)\n\n",
        $followed{copies}, length $followed{options} ? $followed{options} : 'keeping its settings';
    table([ 'the set', 'memcached started with', 'items' ],
          [ 'trained from a file (above)', "memcached's defaults", items_cell($items{ $ROWS[-1][0] }{$SET}, $gzip) ],
          [ 'trained on the live node', "memcached's defaults", items_cell($followed{live}, $gzip) ],
          [ 'trained from a file (above)', $followed{options}, items_cell($followed{file_advised}, $gzip) ],
          [ 'trained on the node restarted as advised', $followed{options}, items_cell($followed{advised}, $gzip) ]);
}

print "\nMicroseconds per value (the fill halves of all three, medians of $ROUNDS interleaved rounds)\n\n";
table([ 'way', 'compress', 'decompress' ],
      map { my $n = $_->{name}; [ $n, sprintf('%.1f', 1e6 * $timing{compress}{$n}), sprintf('%.1f', 1e6 * $timing{decompress}{$n}) ] } @TIMED);
my @bars = (
    [ sprintf('items, all three: the set (a Fast object per prefix) %.2fx Fast default gzip', $items_ratio), $items_ratio >= $BAR_ITEMS, ">= $BAR_ITEMS" ],
    [ sprintf('compress: the set %.2fx as fast as memGzip', $c_ratio), $c_ratio >= 1, '>= 1.00' ],
    [ sprintf('decompress: the set %.2fx as fast as our memGunzip', $d_ratio), $d_ratio >= $BAR_DECOMPRESS, ">= $BAR_DECOMPRESS" ],
);
if (%followed) {
    my $file = $items{ $ROWS[-1][0] }{$SET}{items};
    my $gzip = $by_setting{"memcached's defaults"}{$BASE}{items};
    push @bars,
        [ sprintf('a set trained on a live node (copies of each value) %.2fx Fast default gzip, from a file %.2fx',
                  $followed{live}{items} / $gzip, $file / $gzip), $followed{live}{items} >= 0.99 * $file,
          ">= 99 % of the file's" ],
        [ sprintf('the advice followed: the set trained on the node restarted with %s %.2fx Fast default gzip, '
                . 'the set from a file there %.2fx', $followed{options}, $followed{advised}{items} / $gzip,
                  $followed{file_advised}{items} / $gzip), $followed{advised}{items} >= 0.99 * $followed{file_advised}{items},
          ">= 99 % of the file's" ];
}
print "\nBars\n\n";
printf "  %s %s (bar %s)\n", ($_->[1] ? '✓' : '✗'), $_->[0], $_->[2] for @bars;
print "\nWhat the random IDs cost (4 bytes in each frame, against 1), all three\n\n";
table([ 'writers', 'random IDs', '1-byte IDs', 'random / 1-byte', 'bytes per value, random / 1-byte',
        'random IDs / Fast default gzip' ],
      map { my ($random, $small) = @{ $all }{ @$_[1, 2] };
            $random->{unavailable} || $small->{unavailable} ? [ $_->[0], ('not available') x 2, ('-') x 3 ]
            : [ $_->[0], commas($random->{items}), commas($small->{items}),
                sprintf('%.4f', $random->{items} / $small->{items}),
                sprintf('%.0f / %.0f', $random->{bytes_per_value}, $small->{bytes_per_value}),
                sprintf('%.2fx', $random->{items} / $all->{$BASE}{items}) ] }
      [ 'a Fast object per prefix', $SET, $SET_SMALL ], [ 'one Fast object', $ONE, $ONE_SMALL ]);
print "\nThe set\n\n";
my $small_set = Cache::Memcached::RustXS::Zstd::DictionarySet->read($small_dir);
table([ 'prefix', 'ID', '1-byte ID', 'level', 'dictionary bytes', 'method', 'held-out memory saved vs memGzip' ],
      map { my $e = $set->current($_); [ "'$_'", $e->{id}, $small_set->current($_)->{id}, $e->{level}, $e->{size},
                                         $e->{method} || '-', ($e->{memory_savings} // '-') . ' %' ] }
      $set->prefixes);
my $fb = $set->fallback;
print "  (keys of other prefixes: $fb->{method} level $fb->{level})\n";
print "\nChecks: every fill read back its last $CHECKED values whole: ",
      (join(', ', map { my $r = $_->[0]; map { my $x = $items{$r}{$_}; $x->{wrong} || $x->{missing} ? "$r/$_: " . ($x->{wrong} || 0) . " WRONG, " . ($x->{missing} || 0) . ' missing' : () } @NAMES } @ROWS) || 'yes'),
      "; the model (Dict::SlabModel) against curr_items: ",
      join(', ', map { my $r = $_->[0]; map { my $x = $items{$r}{$_}; $x->{unavailable} || $x->{model} == $x->{items} ? () : "$r/$_ model $x->{model}" } @NAMES } @ROWS) || 'equal everywhere',
      "\nThe training's report: bench/results/memory-train.txt\n";
print_storable($storable) if $storable;

if (eval { require JSON::PP; 1 }) {
    open my $j, '>', "$out/memory.json" or die "$out/memory.json: $!\n";
    print {$j} JSON::PP->new->canonical->pretty->encode({
        date => POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime), perl => sprintf('%vd', $^V),
        memory_mb => $MEMORY_MB, families => \@FAMILIES, rounds => $ROUNDS, items => \%items,
        items_by_settings => \%by_setting, advice_followed => \%followed, advised => { options => $advised->{options}, args => \@advised_args },
        us_per_value => { map { my $d = $_; ($d => { map { ($_->{name} => 1e6 * $timing{$d}{ $_->{name} }) } @TIMED }) } keys %timing },
        bars => [ map { { what => $_->[0], met => $_->[1] ? JSON::PP::true() : JSON::PP::false(), bar => $_->[2] } } @bars ],
        set => [ $set->entries ], set_1_byte_ids => [ $small_set->entries ], fallback => $fb, storable => $storable,
    });
    close $j;
    print "results: bench/results/memory.json\n";
}

# ---- values stored as Perl hashes -------------------------------------------------------
#
# The corpus JSON decoded into Perl hashes: both clients freeze them with
# Storable (nfreeze, flag 1) and compress the frozen bytes. A set trained on
# those bytes (a get response of the training half, frozen), and Sereal with
# its own zstd where Sereal::Encoder and ::Decoder are installed.

# Runs the section in a child process (this script again, which has not
# loaded the JSON set) and returns what it measured.
sub storable_section {
    print STDERR "the values as Perl hashes: in a child process\n";
    my $result = "$tmp/storable.result";
    local $ENV{CMRX_BENCH_STORABLE_CHILD} = $result;
    my @inc = map { ('-I', $_) } grep { !ref } @INC;
    system($^X, @inc, $0, '--memory', $MEMORY_MB, $QUICK ? '--quick' : ()) == 0
        or die "bench/memory.pl: the Storable section failed\n";
    return Storable::retrieve($result);
}

sub storable_child {
    my $result = $ENV{CMRX_BENCH_STORABLE_CHILD};
    require JSON::PP;
    my $json = JSON::PP->new;
    # (Two gh values are HTML, not JSON: they stay strings.)
    my $data = sub { my $v = shift; my $d = eval { $json->decode($v) }; ref $d ? $d : $v };
    my %decoded = map { my $f = $_; ($f => [ map { [ $_->[0], $data->($_->[1]) ] } @{ $fill->{$f} } ]) } @FAMILIES;
    print STDERR "training a set on the frozen values: cmrx-dict train --all --out-dir DIR\n";
    my $dir = train_set(dir => "$tmp/set-storable", log => "$out/memory-train-storable.txt",
                        items => [ map { map { [ $_->[0], map { ref $_ ? Storable::nfreeze($_) : $_ } $data->($_->[1]) ] } @{ $train->{$_} } } @FAMILIES ]);
    my ($one_s, $one_s_why) = one_object_methods($dir);
    my ($sereal, $sereal_why) = sereal_methods();
    my $gzip = fast_way('Fast default (gzip)', sub { gzip_methods() });
    my @ways = (
        $gzip,
        fast_way('Cache::Memcached (gzip)', sub { gzip_methods() }, clients => \&memcached_clients),
        fast_way('the set, a Fast object per prefix', sub { set_methods($dir, "$_[0]:") }),
        fast_way('the set, Cache::Memcached::RustXS::Memcached', sub { set_methods($dir, "$_[0]:") },
                 clients => \&memcached_clients, set => $dir),
        $one_s ? fast_way('the set, one Fast object', sub { $one_s }, one => 1)
               : { name => 'the set, one Fast object', unavailable => $one_s_why },
        $sereal ? { name => 'Sereal (its zstd)', serialize => $sereal }
                : { name => 'Sereal (its zstd)', unavailable => $sereal_why },
    );
    my %r = (ways => [ map { $_->{name} } @ways ]);
    for my $way (@ways) {
        print STDERR "filling a ${MEMORY_MB} MB memcached: Perl hashes, $way->{name}\n" unless $way->{unavailable};
        $r{items}{ $way->{name} } = fill($way, \%decoded, [@FAMILIES]);
    }
    # The JSON strings with gzip, the reference of the bytes.
    my @json = map { my $f = $_; map { [ $f, $_->[1] ] } @{ $fill->{$f} } } @FAMILIES;
    my $b = 0;
    $b += stored_form($gzip, @$_)->[0] for @json;
    $r{json_gzip_bytes} = $b / @json;
    $r{set} = [ Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir)->entries ];
    $r{sereal} = $sereal ? "Sereal::Encoder $Sereal::Encoder::VERSION, compress => SRL_ZSTD, compress_threshold => $THRESHOLD" : $sereal_why;
    Storable::nstore(\%r, $result);
    return 0;
}

sub sereal_methods {
    my $ok = eval { require Sereal::Encoder; require Sereal::Decoder; 1 };
    return (undef, 'Sereal::Encoder and Sereal::Decoder are not installed') unless $ok;
    my $enc = eval { Sereal::Encoder->new({ compress => Sereal::Encoder::SRL_ZSTD(), compress_threshold => $THRESHOLD }) };
    return (undef, "this Sereal::Encoder has no zstd: " . (split /\n/, $@)[0]) unless $enc;
    my $dec = Sereal::Decoder->new;
    return [ sub { $enc->encode($_[0]) }, sub { $dec->decode($_[0]) } ];
}

# Cache::Memcached writers (one object for every family, as it sees the
# keys), with a set_multi of sets.
sub memcached_clients {
    my ($addr, $fams, $way) = @_;
    require Cache::Memcached;
    my %args = (servers => [ $addr ], compress_threshold => $THRESHOLD);
    my $c;
    if (my $dir = $way->{set}) {
        require Cache::Memcached::RustXS::Memcached;
        $c = Cache::Memcached::RustXS::Memcached->new({ %args, zstd => { dictionaries => $dir } });
    }
    else { $c = Cache::Memcached->new({ %args }) }
    my $w = bless { c => $c }, 'CMRXBench::MemoryPl::SetMulti';
    return { map { ($_ => $w) } @$fams };
}

sub CMRXBench::MemoryPl::SetMulti::set_multi { my $s = shift; $s->{c}->set(@$_) for @_ }
sub CMRXBench::MemoryPl::SetMulti::get       { $_[0]{c}->get($_[1]) }

sub print_storable {
    my ($r) = @_;
    my @names = @{ $r->{ways} };
    my $base = $r->{items}{'Fast default (gzip)'};
    printf "\nThe same values as Perl hashes (JSON::PP's decoding), frozen by the clients (Storable's nfreeze, "
         . "flag 1) and then compressed: items in %d MB and stored bytes per value (mean over the fill half; "
         . "gzip of the JSON strings: %.0f); the set trained by `cmrx-dict train --all` on the frozen "
         . "training half\n\n", $MEMORY_MB, $r->{json_gzip_bytes};
    table([ 'way', 'items', 'bytes per value', 'bytes / gzip of the JSON' ],
          map { my $x = $r->{items}{$_};
                $x->{unavailable} ? [ $_, 'not available', '-', '-' ]
                : [ $_, items_cell($x, $_ eq 'Fast default (gzip)' ? undef : $base),
                    sprintf('%.0f', $x->{bytes_per_value}), sprintf('%.2f', $x->{bytes_per_value} / $r->{json_gzip_bytes}) ] } @names);
    print "  ($_: not available: $r->{items}{$_}{unavailable})\n" for grep { $r->{items}{$_}{unavailable} } @names;
    my @bad = grep { !$r->{items}{$_}{unavailable} && ($r->{items}{$_}{wrong} || $r->{items}{$_}{missing}) } @names;
    print "\nChecks: every fill read back its last $CHECKED values whole (as Perl data): ",
          (@bad ? join(', ', map { "$_: $r->{items}{$_}{wrong} WRONG, $r->{items}{$_}{missing} missing" } @bad) : 'yes'),
          "\nSereal: $r->{sereal}\nThe training's report: bench/results/memory-train-storable.txt\n";
}
