#!/usr/bin/perl
# Every figure README.md and the POD quote is a figure of bench/README.md,
# where each measurement has its one home (its table, its run, its method):
# a figure that changes is changed there, and a document that quotes an
# older or a rounded-differently copy fails here.
#
# What a figure is (the rule; xt/README.md says it too):
#   - a number with a unit: a ratio (2.23x, 2.23×, 2.23 times), a share (38 %), a size (460 KiB, 9 KB, 1280 B, 64 MiB)
#     or a time (4.26 µs, written 4.26 us in POD verbatim, 2.15 ms, 105 ns);
#   - a count with thousands separators (213,807);
#   - in a range that ends in a unit ("2.0 to 2.2x", "0.36 - 0.43 %",
#     "3 and 4 times"), every number, with that unit.
# Not figures: a count times a size (100 x 1 KB, a shape), numbers inside
# words, versions and code (4.1.0, 0x28, -I32m), and the settings and
# limits below, which are facts of configuration, not measurements.
# A figure is found when bench/README.md has the same number with the same
# unit (x, × and "times" are one unit; us is µs). A figure in a sentence
# that names the t/ test computing it (F<t/63-memory-forecast.t>) is that
# test's. The verbatim lines of cmrx-dict.pod's EXAMPLES are what its
# commands print, run by t/25-cmrx-dict-examples.t, not quoted figures.
# The check finds a figure that is nowhere in bench/README.md; a figure
# equal to another row's passes.
use strict;
use warnings;
use utf8;

use lib 't/lib';
use Encode ();
use File::Find ();
use Test::More;
use CMRXTest::Peers qw(slurp);

binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);

# Settings, limits and defaults the documents state, which no benchmark
# measures: each with what it is.
my %SETTING = (
    '64 MiB'  => 'the decompression cap, $MaxOutput, by default; the memory model\'s -m',
    '1 MiB'   => 'memcached\'s item size and slab page size by default; the parser\'s first buffer',
    '1 GiB'   => 'the largest item memcached allows (-I)',
    '4 GiB'   => 'the gzip trailer\'s size field wraps at 2**32',
    '2 KiB'   => 'the longest reply line the parser buffers; the smallest dictionary the tuner tries',
    '64 KiB'  => 'the parser\'s read buffer; a reply line\'s limit for cmrx-dict\'s server reader; the smallest growth-loop buffer',
    '512 KiB' => 'memcached\'s slab_chunk_max by default',
    '110 KiB' => 'the tuner\'s largest dictionary (max_size) by default',
    '16 KiB'  => 'the benchmark\'s dictionary size',
    '20 %'    => 'the saving Cache::Memcached\'s compression must reach (COMPRESS_SAVINGS)',
    '5 ms'    => 'the length of one of cmrx-dict\'s timing rounds',
    '10,000'  => 'the interval, in keys, of cmrx-dict\'s sampling progress',
    '14 KB'   => 'an example item size in Dict::SlabModel\'s POD',
    '0.1 %'   => 'the margin within which the advisor calls settings equal',
    '33 %'    => 'an example of Dict::Report\'s percentage format',
    '0 %'     => 'an example of cmrx-dict report\'s output',
    '4 KiB'   => 'the dictionary size in cmrx-dict\'s example output',
    '128 KiB' => 'the size from which Zlib\'s compress_methods samples a value first',
);

my $UNIT = qr/KiB|MiB|GiB|KB|MB|GB|kB|B|µs|us|ms|ns|%|x|×|times/;
my $NUM  = qr/\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?/;
my $JOIN = qr/\s*(?:to|and|or|-|–|\/)\s*/;

# The figures of a line of text, as "NUMBER UNIT" (or "NUMBER" for a count
# with separators).
sub figures {
    my ($text) = @_;
    my @figures;
    while ($text =~ /(?<![\w.\/:\-])($NUM)((?:$JOIN$NUM(?:\s?(?:$UNIT)(?![\w]))?)*)\s?($UNIT)(?![\w])/g) {
        my ($first, $rest, $unit) = ($1, $2, $3);
        next if $unit =~ /^(?:x|×)$/ && substr($text, pos $text) =~ /^ ?\d/;    # 100 x 1 KB
        next if substr($text, 0, $-[0]) =~ /\d ?[x×] ?\z/;                        # its 1 KB
        $unit = 'x'  if $unit =~ /^(?:×|times)$/;
        $unit = 'µs' if $unit eq 'us';
        my @numbers = ($first, $rest =~ /($NUM)/g);
        push @figures, map { "$_ $unit" } @numbers;
    }
    while ($text =~ /(?<![\w.,])(\d{1,3}(?:,\d{3})+)(?![\d,])(?!\s?(?:$UNIT)(?![\w]))/g) {
        push @figures, $1;
    }
    return @figures;
}


# A document's text as [line number, text] pieces: a paragraph of prose
# joined into one piece (a figure may be split across lines), each line of
# a table or of verbatim text its own. For a Perl module, its POD only;
# the POD's escapes E<gt> and E<lt> are blanked.
sub pieces {
    my ($path) = @_;
    my $head1 = '';
    my ($in_pod, $in_fence, $n, @pieces, $open) = ($path =~ /\.(?:pm|pl)\z/ ? 0 : 1, 0, 0);
    for my $line (split /\n/, Encode::decode('UTF-8', slurp($path))) {
        $n++;
        $in_pod = 1 if $line =~ /^=[a-zA-Z]/;
        if (!$in_pod) { undef $open; next }
        $in_pod = 0 if $line =~ /^=cut\b/;
        $head1 = $1 if $line =~ /^=head1\s+(.*)/;
        next if $path =~ m{cmrx-dict\.pod\z} && $head1 eq 'EXAMPLES' && $line =~ /^\s/;
        $in_fence = !$in_fence if $line =~ /^```/;
        (my $text = $line) =~ s/E<(?:gt|lt)>/ /g;
        if ($text !~ /\S/) { undef $open; next }
        if ($in_fence || $text =~ /^(?:\s|\|)/) { undef $open; push @pieces, [$n, $text]; next }
        if ($open) { $open->[1] .= " $text" } else { push @pieces, $open = [$n, $text] }
    }
    return @pieces;
}

# A piece's sentences (a verbatim line is one).
sub sentences { split /(?<=[.!?])\s+(?=[A-Z])/, $_[0] }

# A figure in a sentence that names the test computing it (t/NN-name.t,
# which must exist) is that test's, not the benchmark's.
sub computed_by_test {
    my ($text) = @_;
    return grep { -f $_ } $text =~ m{\b(x?t/\d\d-[\w-]+\.t)\b}g;
}

my %in_bench = map { ($_ => 1) } map { figures($_->[1]) } pieces('bench/README.md');
ok keys %in_bench > 300, scalar(keys %in_bench) . ' figures in bench/README.md';

my @pod;
File::Find::find({ no_chdir => 1, wanted => sub { push @pod, $File::Find::name if /\.(?:pm|pod)\z/ } }, 'lib');
for my $file ('README.md', sort @pod) {
    my @unsourced;
    for my $line (pieces($file)) {
        for my $figure (map { computed_by_test($_) ? () : figures($_) } sentences($line->[1])) {
            next if $in_bench{$figure} || $SETTING{$figure};
            push @unsourced, "$file:$line->[0]: $figure";
        }
    }
    is scalar(@unsourced), 0, "$file: every figure it quotes is one of bench/README.md"
        or diag join "\n", @unsourced;
}

done_testing;
