package CMRXTest::Stored;

# Test helper: how memcached holds a value -- raw, gzip, or zstd and the
# dictionary its frame names -- read from the bytes themselves, not by the
# code under test. See the POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';

use CMRXTest::Raw qw(raw_get);

our $VERSION   = '0.01';
our @EXPORT_OK = qw(frame_dictionary stored_as);

my $ZSTD_MAGIC = "\x28\xb5\x2f\xfd";
my $GZIP_MAGIC = "\x1f\x8b";
my $F_COMPRESS = 2;

# The dictionary ID a zstd frame's header names (0: none); undef if $frame
# is not a zstd frame (RFC 8878, 3.1.1.1: the frame header descriptor's
# two low bits give the ID's size; a window byte comes first unless the
# frame is single-segment).
sub frame_dictionary {
    my ($frame) = @_;
    return undef unless defined $frame && length $frame >= 6 && substr($frame, 0, 4) eq $ZSTD_MAGIC;
    my $descriptor = ord substr $frame, 4, 1;
    my $id_size = (0, 1, 2, 4)[$descriptor & 3] or return 0;
    my $at = 5 + (($descriptor >> 5) & 1 ? 0 : 1);
    return unpack 'V', substr($frame, $at, $id_size) . ("\0" x (4 - $id_size));
}

# How the server at $addr holds $key: 'raw', 'gzip', 'zstd+ID', 'zstd',
# 'other', or 'missing'; with_flags => 1 adds the flags ('zstd+7/2').
sub stored_as {
    my ($addr, $key, %opt) = @_;
    my ($flags, $data) = raw_get($addr, $key);
    return 'missing' unless defined $flags;
    my $id = frame_dictionary($data);
    my $format = !($flags & $F_COMPRESS)            ? 'raw'
               : substr($data, 0, 2) eq $GZIP_MAGIC ? 'gzip'
               : defined $id                        ? ($id ? "zstd+$id" : 'zstd')
               :                                      'other';
    return $opt{with_flags} ? "$format/$flags" : $format;
}

1;

__END__

=head1 NAME

CMRXTest::Stored - how memcached holds a value: raw, gzip, or zstd and its dictionary

=head1 SYNOPSIS

    use CMRXTest::Stored qw(stored_as frame_dictionary);

    is stored_as($addr, 'app:api:1'), 'zstd+1', 'stored with dictionary 1';
    is stored_as($addr, 'plain', with_flags => 1), 'raw/0', 'stored raw, flags 0';
    my $id = frame_dictionary($frame);    # 0: no dictionary; undef: not zstd

=head1 FUNCTIONS

=over 4

=item C<stored_as($addr, $key, with_flags =E<gt> 1)>

Reads C<$key> from the server at C<$addr> as it holds it
(L<CMRXTest::Raw>'s C<raw_get>) and says how it is stored: C<raw> (flag 2
not set), C<gzip> (flag 2 and gzip's magic number), C<zstd+ID> or C<zstd>
(flag 2 and a zstd frame naming dictionary ID, or none), C<other> (flag 2
and neither), or C<missing> for a miss. With C<with_flags>, the flags
follow after a slash: C<zstd+7/2>, C<raw/0>.

=item C<frame_dictionary($frame)>

The dictionary ID the zstd frame's header names, 0 when it names none,
C<undef> when C<$frame> is not a zstd frame. Read from the header itself
(RFC 8878), so that the tests do not judge the distribution's frames by
its own reader (C<Cache::Memcached::RustXS::Zstd::frame_dictionary_id>).

=back

=cut
